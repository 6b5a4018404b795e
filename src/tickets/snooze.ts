import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { parseRfc3339, toRfc3339 } from '../core/clock.js';
import { recordEvent } from '../events/record.js';
import { Status } from '../vocab/models.js';
import { Ticket, type Message } from './models.js';
import type { TicketChange } from './hooks.js';
import { assertNotClosed, loadTicket } from './ops-access.js';
import type { SnoozeInput } from './ops-schemas.js';
import { ticketOut } from './output.js';
import type { TicketOut } from './schemas.js';

/**
 * Snooze hides a ticket from the working views until a time (`snoozed_until`). A snooze ends in
 * one of four ways, each recorded as `ticket.unsnoozed` on the timeline with its reason:
 * - its time comes: the `ticket-unsnooze` job (every minute) clears due snoozes (`due`, no actor);
 * - the customer replies publicly: the conversation's message hook `endSnoozeOnCustomerReply`
 *   (`customer_reply`);
 * - the ticket closes (a merge included): the ticket hook `endSnoozeOnClose` (`closed`);
 * - staff end it early with DELETE /tickets/{id}/snooze (`cancelled`).
 * Both hooks are registered in src/wiring.ts.
 */

const MAX_SNOOZE_MS = 366 * 24 * 3600 * 1000;

/** Snoozes (or re-snoozes) a ticket and answers the ticket. */
export async function snoozeTicket(ctx: Ctx, id: string, input: SnoozeInput): Promise<TicketOut> {
  const ticket = await loadTicket(ctx, id, { forUpdate: true });
  // The schema checked the form; parseRfc3339 also refuses what Date would read leniently.
  const until = parseRfc3339(input.until);
  if (!until) throw errors.invalid('until', 'must be an RFC 3339 timestamp');
  if (until.getTime() <= ctx.now.getTime()) throw errors.invalid('until', 'must be in the future');
  if (until.getTime() - ctx.now.getTime() > MAX_SNOOZE_MS) throw errors.invalid('until', 'must be at most a year ahead');
  await assertNotClosed(ctx, ticket);
  const previous = toRfc3339(ticket.snoozed_until);
  const [updated] = await Ticket.scoped(ctx).where('tickets.id', id).patch({ snoozed_until: until, updated_at: ctx.now } as never).returning('*') as unknown as Ticket[];
  await recordEvent(ctx, {
    type: 'ticket.snoozed',
    subjectType: 'ticket',
    ticketId: id,
    from: previous,
    to: toRfc3339(until),
    data: { ticket_id: id, ticket_number: ticket.ticket_number, snoozed_until: toRfc3339(until), actor_id: ctx.actor.userId, actor_name: ctx.actor.name },
  });
  return ticketOut(updated!);
}

export type UnsnoozeReason = 'due' | 'customer_reply' | 'closed' | 'cancelled';

/**
 * Ends a ticket's snooze, if it has one, and records why. For the conversation (a customer reply)
 * and the job; `ticket` must be the current row (ideally locked).
 */
export async function endSnooze(ctx: Ctx, ticket: Ticket, reason: UnsnoozeReason): Promise<boolean> {
  if (!ticket.snoozed_until) return false;
  const cleared = await Ticket.scoped(ctx).where('tickets.id', ticket.id).whereNotNull('snoozed_until')
    .patch({ snoozed_until: null, updated_at: ctx.now } as never);
  if (!cleared) return false;
  const until = toRfc3339(ticket.snoozed_until);
  await recordEvent(ctx, {
    type: 'ticket.unsnoozed',
    subjectType: 'ticket',
    ticketId: ticket.id,
    from: until,
    to: null,
    data: { ticket_id: ticket.id, ticket_number: ticket.ticket_number, snoozed_until: until, reason },
    // The job ends a due snooze on its own: no person acted.
    ...(reason === 'due' ? { actor: null } : {}),
  });
  return true;
}

export async function cancelSnooze(ctx: Ctx, id: string): Promise<void> {
  const ticket = await loadTicket(ctx, id, { forUpdate: true });
  await endSnooze(ctx, ticket, 'cancelled');
}

/** The job's work in one tenant: every snooze due at ctx.now ends. Returns how many ended. */
export async function unsnoozeDue(ctx: Ctx): Promise<number> {
  // SKIP LOCKED: a ticket someone is changing right now is left for the next run.
  const due = await Ticket.scoped(ctx).whereNotNull('snoozed_until').where('snoozed_until', '<=', ctx.now)
    .orderBy('snoozed_until').limit(1000).forUpdate().skipLocked();
  let ended = 0;
  for (const ticket of due) if (await endSnooze(ctx, ticket, 'due')) ended += 1;
  return ended;
}

/** Ticket hook: a ticket that enters a closed status loses its snooze (closed is final). */
export async function endSnoozeOnClose(ctx: Ctx, change: TicketChange): Promise<boolean> {
  if (!change.changed.has('status_id') || !change.after.snoozed_until) return false;
  const status = await Status.findIn(ctx, change.after.status_id);
  return status?.category === 'closed' ? endSnooze(ctx, change.after, 'closed') : false;
}

/**
 * Message hook of the conversation (its `MessageAdded`, typed here by shape so the tickets area
 * does not import the conversation): a customer's public message ends the snooze.
 */
export async function endSnoozeOnCustomerReply(ctx: Ctx, added: { ticket: Ticket; message: Pick<Message, 'is_agent' | 'is_private'> }): Promise<void> {
  if (added.message.is_agent || added.message.is_private) return;
  await endSnooze(ctx, added.ticket, 'customer_reply');
}
