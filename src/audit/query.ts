import { Type, type Static } from '@sinclair/typebox';
import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { parseRfc3339, toRfc3339 } from '../core/clock.js';
import { cursorParams, paginateUnbounded, type CursorMeta, type Page } from '../core/pagination.js';
import { Nullable, StringEnum, Timestamp } from '../core/schema-types.js';
import { AuditRecord } from './models.js';

/**
 * Reading the audit trail: newest first, filtered, in the page or the cursor form (the log grows
 * without bound). `from` is inclusive and `to` exclusive, so consecutive windows never overlap.
 */
export const AuditEntry = Type.Object({
  id: Type.String(),
  action: Type.String(),
  actor: Type.Object({
    type: StringEnum(['user', 'api_key', 'system', 'cli']),
    id: Nullable(Type.String()),
    name: Nullable(Type.String()),
  }),
  resource_type: Type.String(),
  resource_id: Nullable(Type.String()),
  changes: Type.Record(Type.String(), Type.Unknown()),
  ip: Nullable(Type.String()),
  request_id: Nullable(Type.String()),
  created_at: Type.String(),
}, { $id: 'AuditEntry' });
export type AuditEntry = Static<typeof AuditEntry>;

export const AuditQuery = Type.Object({
  ...cursorParams,
  action: Type.Optional(Type.String({ maxLength: 100 })),
  actor_id: Type.Optional(Type.String({ format: 'uuid' })),
  resource_type: Type.Optional(Type.String({ maxLength: 100 })),
  resource_id: Type.Optional(Type.String({ maxLength: 200 })),
  from: Type.Optional(Timestamp({ description: 'Inclusive lower bound of created_at' })),
  to: Type.Optional(Timestamp({ description: 'Exclusive upper bound of created_at' })),
});
export type AuditQuery = Static<typeof AuditQuery>;

interface AuditRow {
  id: string;
  actor_type: AuditEntry['actor']['type'];
  actor_id: string | null;
  actor_name: string | null;
  action: string;
  resource_type: string;
  resource_id: string | null;
  changes: Record<string, unknown>;
  ip: string | null;
  request_id: string | null;
  created_at: Date;
}

export function auditEntryOut(row: AuditRow): AuditEntry {
  return {
    id: row.id,
    action: row.action,
    actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name },
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    changes: row.changes ?? {},
    ip: row.ip,
    request_id: row.request_id,
    created_at: toRfc3339(row.created_at)!,
  };
}

export async function listAuditLog(ctx: Ctx, query: AuditQuery): Promise<Page<AuditEntry, CursorMeta>> {
  const qb = AuditRecord.scoped(ctx);
  if (query.action) qb.where('audit_log.action', query.action);
  if (query.actor_id) qb.where('audit_log.actor_id', query.actor_id);
  if (query.resource_type) qb.where('audit_log.resource_type', query.resource_type);
  if (query.resource_id) qb.where('audit_log.resource_id', query.resource_id);
  const from = query.from ? parseRfc3339(query.from) : null;
  const to = query.to ? parseRfc3339(query.to) : null;
  const problems = [
    ...(query.from && !from ? [{ field: 'from', message: 'must be a valid RFC 3339 timestamp' }] : []),
    ...(query.to && !to ? [{ field: 'to', message: 'must be a valid RFC 3339 timestamp' }] : []),
    ...(from && to && from >= to ? [{ field: 'to', message: 'must be later than from' }] : []),
  ];
  if (problems.length) throw errors.validation(problems);
  if (from) qb.where('audit_log.created_at', '>=', from);
  if (to) qb.where('audit_log.created_at', '<', to);
  return paginateUnbounded<AuditRow, AuditEntry>(query, qb, { table: 'audit_log' }, auditEntryOut);
}
