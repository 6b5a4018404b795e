import type { Ctx } from '../../core/context.js';
import { recordEvent } from '../record.js';
import type { EventFacts } from '../consumers.js';

/** The ticket snapshot of `ticket.created` (SPEC "Outbound webhook events"). */
export interface TicketCreatedPayload {
  ticket_id: string;
  ticket_number: number;
  subject: string;
  requester_id: string;
  requester_name: string;
  requester_email: string;
  organization_name: string | null;
  team_id: string | null;
  team_name: string | null;
  assignee_name: string | null;
  priority: string;
  channel: string;
  sla_due_at: string | null;
  body: string;
  /** Null when the ticket was created with a plain-text body only. */
  body_html: string | null;
}

/**
 * A new ticket on any channel. The ticket desk calls this in the ticket's create transaction.
 * `held`: the new ticket's row and its requester's as the caller holds them (see NewEvent).
 */
export async function emitTicketCreated(ctx: Ctx, payload: TicketCreatedPayload, held?: EventFacts): Promise<void> {
  await recordEvent(ctx, { type: 'ticket.created', subjectType: 'ticket', ticketId: payload.ticket_id, data: { ...payload }, held });
}
