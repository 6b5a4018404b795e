import type { Ctx } from '../core/context.js';
import { AuditRecord } from './models.js';

/**
 * The audit trail: one row per audited change, written with `ctx.trx` so it commits or rolls back
 * with the change itself. The table is append-only (a trigger refuses UPDATE/DELETE/TRUNCATE).
 */
export interface AuditEntry {
  action: string;
  resourceType: string;
  resourceId?: string | null;
  /** What changed: `{field: {from, to}}`, or facts of the action. Never secrets. */
  changes?: Record<string, unknown>;
  /** Overrides the context's actor, e.g. a user acting anonymously through a reset link. */
  actor?: { type: 'user' | 'api_key' | 'system' | 'cli'; id: string | null; name: string | null };
}

export async function recordAudit(ctx: Ctx, entry: AuditEntry): Promise<void> {
  const actor = entry.actor ?? {
    type: ctx.actor.type,
    id: ctx.actor.apiKeyId ?? ctx.actor.userId,
    name: ctx.actor.name,
  };
  await AuditRecord.insertIn(ctx, {
    actor_type: actor.type,
    actor_id: actor.id,
    actor_name: actor.name,
    action: entry.action,
    resource_type: entry.resourceType,
    resource_id: entry.resourceId ?? null,
    changes: entry.changes ?? {},
    ip: ctx.ip,
    request_id: ctx.requestId,
    created_at: ctx.now,
  });
}

/** `{field: {from, to}}` for the fields whose values differ; what an update audits. */
export function diff(before: Record<string, unknown>, after: Record<string, unknown>, fields: string[]): Record<string, { from: unknown; to: unknown }> {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const field of fields) {
    const from = before[field] ?? null;
    const to = after[field] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[field] = { from, to };
  }
  return changes;
}
