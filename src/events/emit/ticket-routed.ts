import type { Ctx } from '../../core/context.js';
import { recordEvent } from '../record.js';

/** `ticket.routed`: a routing rule assigned an agent or a team. */
export interface TicketRoutedPayload {
  ticket_id: string;
  ticket_number: number;
  trigger_event: 'ticket_created' | 'ticket_updated' | 'time_trigger';
  rule_id: string;
  rule_name: string;
  agent_id: string | null;
  agent_name: string | null;
  team_id: string | null;
  team_name: string | null;
}

export async function emitTicketRouted(ctx: Ctx, payload: TicketRoutedPayload): Promise<void> {
  await recordEvent(ctx, {
    type: 'ticket.routed', subjectType: 'ticket', ticketId: payload.ticket_id,
    to: payload.agent_name ?? payload.team_name, data: { ...payload },
  });
}
