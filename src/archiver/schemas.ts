import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../core/schema-types.js';

/** Request and response schemas of /ticket-archiver (CONTRACT §19). */
export const ArchiveRun = Type.Object({
  older_than_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 36_500, default: 365, description: 'Closed tickets closed more than this many days ago' })),
  dry_run: Type.Optional(Type.Boolean({ default: false, description: 'Only count the tickets a run would archive' })),
}, { $id: 'ArchiveRunRequest', additionalProperties: false });
export type ArchiveRunIn = Static<typeof ArchiveRun>;

export const ArchiveRunStarted = Type.Object({ run_id: Type.String() }, { $id: 'ArchiveRunStarted' });

export const ArchiveRunStatus = Type.Object({
  run_id: Type.String(),
  status: StringEnum(['queued', 'running', 'completed', 'failed'] as const),
  dry_run: Type.Boolean(),
  older_than_days: Type.Integer(),
  cutoff: Type.String(),
  tickets: Type.Integer({ description: 'Tickets archived (a dry run: tickets that would be)' }),
  bytes: Type.Integer(),
  files: Type.Integer(),
  started_at: Nullable(Type.String()),
  finished_at: Nullable(Type.String()),
  error: Nullable(Type.String()),
}, { $id: 'ArchiveRun' });

export const ArchiverStatus = Type.Object({
  archived_tickets: Type.Integer(),
  last_run: Type.Union([ArchiveRunStatus, Type.Null()]),
}, { $id: 'ArchiverStatus' });
export type ArchiverStatus = Static<typeof ArchiverStatus>;
