import type { Ctx } from '../core/context.js';
import { errors, isAppError, type FieldProblem } from '../core/errors.js';
import { findAssignee, findPriority, findStatus } from '../tickets/references.js';
import { applyTicketChanges, type TicketChangeSet } from '../tickets/changes.js';
import { loadVisibleTicket } from '../tickets/visibility.js';
import type { BulkUpdate, BulkResult } from './bulk-schemas.js';

/**
 * POST /tickets/bulk (CONTRACT §4): one change set applied to up to 100 tickets, each on its own,
 * through the tickets' change function, so each ticket records its own events and runs its hooks.
 * Each ticket's change runs in a savepoint: a ticket that fails (unknown or another tenant's id,
 * closed, a value it refuses) rolls back alone and reports `{id, ok: false, error: {code, message}}`;
 * the others commit. Tickets are locked in id order (not request order), so two bulk requests over
 * overlapping tickets cannot deadlock. The answer lists the results in request order.
 */
const CHANGE_FIELDS = ['status_id', 'priority_id', 'assigned_agent_id', 'add_tags', 'remove_tags'] as const;

export async function bulkUpdate(ctx: Ctx, input: BulkUpdate): Promise<{ updated: number; results: BulkResult[] }> {
  if (!CHANGE_FIELDS.some((f) => input[f] !== undefined)) {
    throw errors.validation([{ field: 'ticket_ids', message: `come with at least one change: ${CHANGE_FIELDS.join(', ')}` }]);
  }
  // The values are the same for every ticket: a bad one refuses the request (422), not each ticket.
  const problems: FieldProblem[] = [];
  if (input.status_id) await findStatus(ctx, input.status_id, 'status_id', problems);
  if (input.priority_id) await findPriority(ctx, input.priority_id, 'priority_id', problems);
  if (input.assigned_agent_id) await findAssignee(ctx, input.assigned_agent_id, 'assigned_agent_id', problems);
  if (problems.length) throw errors.validation(problems);
  const changes: TicketChangeSet = {};
  for (const field of CHANGE_FIELDS) if (input[field] !== undefined) (changes as Record<string, unknown>)[field] = input[field];

  const ids = [...new Set(input.ticket_ids.map((id) => id.toLowerCase()))];
  const byId = new Map<string, BulkResult>();
  for (const id of [...ids].sort()) {
    try {
      await ctx.trx.transaction(async (savepoint) => {
        const inner: Ctx = { ...ctx, trx: savepoint };
        const ticket = await loadVisibleTicket(inner, id, { forUpdate: true });
        await applyTicketChanges(inner, ticket, changes);
      });
      byId.set(id, { id, ok: true });
    } catch (error) {
      if (!isAppError(error)) throw error;
      byId.set(id, { id, ok: false, error: { code: error.code, message: error.message } });
    }
  }
  const results = ids.map((id) => byId.get(id)!);
  return { updated: results.filter((r) => r.ok).length, results };
}
