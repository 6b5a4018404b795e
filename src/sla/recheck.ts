import type { Ctx } from '../core/context.js';
import { scoped } from '../db/tenant-scope.js';

/**
 * After the business hours or holidays change, every running clock of the tenant may fall due at
 * another instant than the one stored. Marking those tickets due now lets the next escalation run
 * (within a minute) replay them under the new calendar: their `sla`, `sla_due_at` and
 * `sla_next_at` move, and a deadline that is now past is announced. Paused and settled tickets
 * (no `sla_next_at`) are replayed at their next write.
 */
export async function recheckRunningClocks(ctx: Ctx): Promise<void> {
  await scoped(ctx, 'tickets').whereNotNull('sla_next_at').where('sla_next_at', '>', ctx.now).update({ sla_next_at: ctx.now });
}
