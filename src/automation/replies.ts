import type { Ctx } from '../core/context.js';
import { recordEvent } from '../events/record.js';
import { Message, Ticket } from '../tickets/models.js';

/**
 * A public staff reply posted by automation (a macro's `post_reply`). It stands in for the
 * conversation area's `addMessage(ctx, ticketId, {body, is_private: false})`, which is not on this
 * branch: it writes the message, records `ticket.message_created` with the spec's payload and
 * stamps the first response, as addMessage does. At merge, replace the body of this function with
 * that call (same arguments), so every reply meets the conversation's rules and hooks.
 */
export async function postReply(ctx: Ctx, ticket: Ticket, body: string): Promise<Message> {
  const author = { id: ctx.actor.userId, name: ctx.actor.name };
  const message = await Message.insertIn(ctx, {
    ticket_id: ticket.id, body, body_html: null, is_private: false, author_id: author.id, author_name: author.name,
    is_agent: true, channel: 'api', created_at: ctx.now,
  });
  await recordEvent(ctx, {
    type: 'ticket.message_created',
    subjectType: 'ticket',
    ticketId: ticket.id,
    data: {
      ticket_id: ticket.id, ticket_number: Number(ticket.ticket_number), message_id: message.id, author_id: author.id,
      author_name: author.name, is_agent: true, is_private: false, body, body_html: null,
    },
  });
  const columns: Record<string, unknown> = { updated_at: ctx.now };
  if (!ticket.first_responded_at) columns.first_responded_at = ctx.now;
  await Ticket.scoped(ctx).where('tickets.id', ticket.id).patch(columns as never);
  return message;
}
