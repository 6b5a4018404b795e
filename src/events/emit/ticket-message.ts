import type { Ctx } from '../../core/context.js';
import { recordEvent } from '../record.js';
import type { EventFacts } from '../consumers.js';
import type { CompanionRows } from '../../db/companion-rows.js';

/** `ticket.message_created`: a customer reply, an agent reply or a private note. */
export interface MessageCreatedPayload {
  ticket_id: string;
  ticket_number: number;
  message_id: string;
  author_id: string | null;
  author_name: string | null;
  is_agent: boolean;
  is_private: boolean;
  body: string;
  /** Null when the message was written as plain text only. */
  body_html: string | null;
}

/** `held`: the ticket's row as the caller holds it; `writes`: rows written with the event (see NewEvent). */
export async function emitMessageCreated(ctx: Ctx, payload: MessageCreatedPayload, held?: EventFacts, writes?: CompanionRows[]): Promise<void> {
  await recordEvent(ctx, {
    type: 'ticket.message_created', subjectType: 'ticket', ticketId: payload.ticket_id, subjectId: payload.ticket_id,
    actor: { id: payload.author_id, name: payload.author_name }, data: { ...payload }, held, writes,
  });
}
