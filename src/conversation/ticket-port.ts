import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { recordEvent } from '../events/record.js';
import { Ticket } from '../tickets/models.js';
import { Status } from '../vocab/models.js';

/**
 * What the conversation needs from the tickets area: "may this actor see this ticket" and "change
 * its status". The tickets area owns both (src/tickets/visibility.ts `loadVisibleTicket`,
 * src/tickets/changes.ts `applyTicketChanges`, which also runs the SLA hooks); until the branches
 * meet, this port carries minimal stand-ins with the same meaning, and at the merge it becomes
 * re-exports of those two functions (docs/architecture.md "Conversation").
 */

export const isStaffActor = (ctx: Ctx) => ctx.actor.role === 'admin' || ctx.actor.role === 'agent'
  || ctx.actor.type === 'cli' || ctx.actor.type === 'system';

/** One ticket the actor may see: staff any of the tenant, a customer those they requested. */
export async function loadVisibleTicket(ctx: Ctx, id: string, options: { forUpdate?: boolean } = {}): Promise<Ticket> {
  const qb = Ticket.scoped(ctx).where('tickets.id', id);
  if (!isStaffActor(ctx)) qb.where('tickets.requester_id', ctx.actor.userId ?? '00000000-0000-0000-0000-000000000000');
  if (options.forUpdate) qb.forUpdate();
  const [ticket] = await qb.limit(1);
  if (!ticket) throw errors.notFound('ticket', id);
  return ticket;
}

/** Moves `ticket` to `status`, stamping resolution times and recording `ticket.status_changed`. */
export async function changeTicketStatus(ctx: Ctx, ticket: Ticket, status: Status): Promise<Ticket> {
  const current = (await Status.findIn(ctx, ticket.status_id))!;
  const columns: Record<string, unknown> = { status_id: status.id, updated_at: ctx.now };
  if (status.category === 'resolved') columns.resolved_at = ctx.now;
  else if (status.category === 'closed') columns.closed_at = ctx.now;
  else if (ticket.resolved_at) columns.resolved_at = null;
  const [after] = await Ticket.scoped(ctx).where('tickets.id', ticket.id).patch(columns as never).returning('*') as unknown as Ticket[];
  await recordEvent(ctx, {
    type: 'ticket.status_changed',
    subjectType: 'ticket',
    ticketId: ticket.id,
    from: current.name,
    to: status.name,
    data: {
      ticket_id: ticket.id,
      ticket_number: Number(ticket.ticket_number),
      from: current.name,
      to: status.name,
      from_id: current.id,
      to_id: status.id,
      actor_id: ctx.actor.userId,
      actor_name: ctx.actor.name,
    },
  });
  return after!;
}
