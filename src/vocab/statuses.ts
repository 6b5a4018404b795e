import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { diff, recordAudit } from '../audit/service.js';
import { Priority, Status } from './models.js';
import type { PriorityOut, StatusOut, StatusUpdate } from './schemas.js';

/**
 * Statuses and priorities: fixed keys and categories per tenant (CONTRACT §5); an admin may rename
 * a status, reorder it, or say whether it pauses the SLA clock.
 */
export function statusOut(s: Status): StatusOut {
  return { id: s.id, key: s.key, name: s.name, category: s.category, pauses_sla: s.pauses_sla, position: s.position };
}

export function priorityOut(p: Priority): PriorityOut {
  return { id: p.id, key: p.key, name: p.name, position: p.position };
}

export async function listStatuses(ctx: Ctx): Promise<{ data: StatusOut[] }> {
  const rows = await Status.scoped(ctx).orderBy('position').orderBy('id');
  return { data: rows.map(statusOut) };
}

export async function listPriorities(ctx: Ctx): Promise<{ data: PriorityOut[] }> {
  const rows = await Priority.scoped(ctx).orderBy('position').orderBy('id');
  return { data: rows.map(priorityOut) };
}

export async function updateStatus(ctx: Ctx, id: string, input: StatusUpdate): Promise<StatusOut> {
  const before = await Status.findIn(ctx, id);
  if (!before) throw errors.notFound('status', id);
  const columns: Record<string, unknown> = {};
  if (input.name !== undefined) columns.name = input.name.trim();
  if (input.pauses_sla !== undefined) columns.pauses_sla = input.pauses_sla;
  if (input.position !== undefined) columns.position = input.position;
  const changes = diff(before as unknown as Record<string, unknown>, { ...before, ...columns }, ['name', 'pauses_sla', 'position']);
  if (!Object.keys(changes).length) return statusOut(before);
  const [after] = await Status.scoped(ctx).where('statuses.id', id).patch({ ...columns, updated_at: ctx.now } as never).returning('*') as unknown as Status[];
  await recordAudit(ctx, { action: 'status.updated', resourceType: 'status', resourceId: id, changes: { key: before.key, ...changes } });
  return statusOut(after!);
}
