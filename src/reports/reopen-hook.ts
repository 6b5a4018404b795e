import type { Ctx } from '../core/context.js';
import { scoped } from '../db/tenant-scope.js';
import type { TicketChange } from '../tickets/hooks.js';

/**
 * Counts reopenings for the reopen rate (docs/reports.md): a status change that takes a resolved
 * ticket back to new, open or pending clears its `resolved_at` (src/tickets/changes.ts); each such
 * change adds one to `tickets.reopened_count`, in the change's transaction.
 */
export async function countReopening(ctx: Ctx, change: TicketChange): Promise<boolean> {
  if (!change.before || !change.changed.has('status_id')) return false;
  if (!change.before.resolved_at || change.after.resolved_at) return false;
  await scoped(ctx, 'tickets').where({ id: change.after.id }).increment('reopened_count', 1);
  return true;
}
