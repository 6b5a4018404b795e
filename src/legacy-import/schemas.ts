import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../core/schema-types.js';
import { RESULT_KEYS } from './writer.js';

/** Request and response schemas of /legacy-import (CONTRACT §12). */
const Source = Type.String({ minLength: 1, maxLength: 2000, description: 'mysql://user:pass@host:port/db[?prefix=ost_]' });

export const TestConnectionBody = Type.Object({ source: Source }, { additionalProperties: false });
export type TestConnectionBody = Static<typeof TestConnectionBody>;

const Counts = Type.Object(Object.fromEntries(RESULT_KEYS.map((k) => [k, Type.Integer()])) as Record<typeof RESULT_KEYS[number], ReturnType<typeof Type.Integer>>);

export const TestConnectionAnswer = Type.Object({
  ok: Type.Boolean(),
  version: Type.String(),
  counts: Type.Record(Type.String(), Type.Integer(), { description: 'rows in the source: teams (departments), agents, organizations, customers, ticket_types, tickets, thread_entries, attachments' }),
}, { $id: 'LegacyImportConnection' });

export const StartImportBody = Type.Object({
  source: Source,
  dry_run: Type.Optional(Type.Boolean()),
  source_timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone of the source dates (default UTC)' })),
}, { additionalProperties: false });
export type StartImportBody = Static<typeof StartImportBody>;

export const ImportQueued = Type.Object({ id: Type.String(), status: StringEnum(['queued'] as const) }, { $id: 'LegacyImportQueued' });

export const ImportRun = Type.Object({
  id: Type.String(),
  status: StringEnum(['queued', 'running', 'completed', 'failed'] as const),
  phase: Nullable(Type.String({ description: 'while running: the entity being imported (teams, agents, …, tickets, messages, attachments)' })),
  source: Type.String({ description: 'the source without its password' }),
  dry_run: Type.Boolean(),
  counts: Counts,
  skipped: Counts,
  errors: Type.Array(Type.Object({ kind: Type.String(), legacy_id: Type.String(), message: Type.String() })),
  started_at: Nullable(Type.String()),
  finished_at: Nullable(Type.String()),
  created_at: Type.String(),
}, { $id: 'LegacyImport' });
export type ImportRun = Static<typeof ImportRun>;
