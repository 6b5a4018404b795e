import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { recordEvent } from '../events/record.js';
import { Status } from '../vocab/models.js';
import { Message, Ticket } from './models.js';
import { applyTicketChanges } from './changes.js';
import { loadTicketPair, statusOf, ticketLabel } from './ops-access.js';
import type { MergeInput, MergeResult } from './ops-schemas.js';

/**
 * Merge (CONTRACT §5): the source ticket is closed with `merged_into_id` naming the target, and
 * the target's conversation gets a private note naming the source and the reason. Events:
 * `ticket.merged_into` on the source (from the source to the target), `ticket.merged_from` on the
 * target (from the source to the target), the source's `ticket.status_changed` to closed (through
 * the desk's change function, applyTicketChanges) and the note's `ticket.message_created`, all in
 * the one transaction.
 *
 * Refused: the same ticket (422), a target of another tenant or unknown (404), a source already
 * merged or closed (409: closed is final), a closed target (409), and a target that was itself
 * merged away (409: no chains). Tickets merged into the source earlier follow it to the target,
 * so every `merged_into_id` names an open primary ticket: chains never form.
 */
export async function mergeTicket(ctx: Ctx, id: string, input: MergeInput): Promise<MergeResult> {
  const [source, target] = await loadTicketPair(ctx, id, input.target_ticket_id, 'target_ticket_id');
  const reason = input.reason?.trim() || null;

  if (source.merged_into_id) {
    throw errors.conflict(`Ticket ${ticketLabel(source)} was already merged`, { reason: 'already_merged', merged_into_id: source.merged_into_id });
  }
  if (target.merged_into_id) {
    throw errors.conflict(`Ticket ${ticketLabel(target)} was itself merged into another ticket; merge into that one`, {
      reason: 'target_merged', merged_into_id: target.merged_into_id,
    });
  }
  const sourceStatus = await statusOf(ctx, source);
  if (sourceStatus.category === 'closed') throw errors.conflict(`Ticket ${ticketLabel(source)} is closed`, { reason: 'ticket_closed', ticket_id: source.id });
  const targetStatus = await statusOf(ctx, target);
  if (targetStatus.category === 'closed') throw errors.conflict(`Ticket ${ticketLabel(target)} is closed`, { reason: 'target_closed', ticket_id: target.id });

  const closed = await closedStatus(ctx);
  // merged_into_id first, so the ticket hooks of the close below see a merged ticket.
  const [marked] = await Ticket.scoped(ctx).where('tickets.id', source.id)
    .patch({ merged_into_id: target.id, updated_at: ctx.now } as never).returning('*') as unknown as Ticket[];
  // The one change path of tickets: status_changed event, closed_at/resolved_at stamps, hooks (SLA,
  // the end of a snooze).
  const merged = await applyTicketChanges(ctx, marked!, { status_id: closed.id });
  // Flatten: what was merged into the source now points at the target.
  await Ticket.scoped(ctx).where('tickets.merged_into_id', source.id).patch({ merged_into_id: target.id, updated_at: ctx.now } as never);
  await Ticket.scoped(ctx).where('tickets.id', target.id).patch({ updated_at: ctx.now } as never);

  const note = await addMergeNote(ctx, source, target, reason);
  const actor = { actor_id: ctx.actor.userId, actor_name: ctx.actor.name };
  const pair = {
    source_ticket_id: source.id, source_ticket_number: source.ticket_number,
    target_ticket_id: target.id, target_ticket_number: target.ticket_number, reason,
  };
  await recordEvent(ctx, {
    type: 'ticket.merged_into', subjectType: 'ticket', ticketId: source.id, from: ticketLabel(source), to: ticketLabel(target),
    data: { ticket_id: source.id, from: source.id, to: target.id, ...pair, ...actor },
  });
  await recordEvent(ctx, {
    type: 'ticket.merged_from', subjectType: 'ticket', ticketId: target.id, from: ticketLabel(source), to: ticketLabel(target),
    data: { ticket_id: target.id, from: source.id, to: target.id, ...pair, ...actor },
  });
  return {
    ticket_id: merged.id,
    merged_into_id: target.id,
    status_id: merged.status_id,
    closed_at: toRfc3339(merged.closed_at)!,
    note_id: note.id,
  };
}

/** The tenant's closing status: key `closed` if it exists, else the first of the closed category. */
async function closedStatus(ctx: Ctx): Promise<Status> {
  const status = await Status.scoped(ctx).where('category', 'closed').orderByRaw("(key = 'closed') desc, position, id").first();
  if (!status) throw errors.conflict('This tenant has no status of the closed category', { reason: 'no_closed_status' });
  return status;
}

/**
 * The private note on the target. Written through the Message model: the conversation's
 * add-message function should take its place when the two areas meet (sanitising, counters).
 */
async function addMergeNote(ctx: Ctx, source: Ticket, target: Ticket, reason: string | null): Promise<Message> {
  const body = `Ticket ${ticketLabel(source)} "${source.subject}" was merged into this ticket.${reason ? `\nReason: ${reason}` : ''}`;
  const note = await Message.insertIn(ctx, {
    ticket_id: target.id, body, body_html: null, is_private: true, author_id: ctx.actor.userId,
    author_name: ctx.actor.name, is_agent: true, channel: 'api', created_at: ctx.now,
  });
  await recordEvent(ctx, {
    type: 'ticket.message_created', subjectType: 'ticket', ticketId: target.id,
    data: {
      ticket_id: target.id, message_id: note.id, author_id: ctx.actor.userId, author_name: ctx.actor.name,
      is_agent: true, is_private: true, body, body_html: null,
    },
  });
  return note;
}
