import type { Ctx } from '../core/context.js';
import { addMessage } from '../conversation/messages.js';
import type { Ticket } from '../tickets/models.js';

/**
 * A public staff reply posted by automation (a macro's `post_reply`), through the conversation's
 * one way in, so it meets the same rules and hooks as a reply typed by the agent (first response,
 * the SLA clocks, `ticket.message_created`).
 */
export async function postReply(ctx: Ctx, ticket: Ticket, body: string): Promise<void> {
  await addMessage(ctx, ticket.id, { body, is_private: false });
}
