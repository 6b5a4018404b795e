import type { Ctx } from '../../core/context.js';
import { recordEvent } from '../record.js';

/** `ticket.routed`: a routing rule assigned a team or an agent (one event for each). */
export type TicketRoutedPayload = {
  ticket_id: string;
  ticket_number: number;
  trigger_event: string;
  rule_id: string;
  rule_name: string;
} & ({ team_id: string; team_name: string } | { agent_id: string; agent_name: string });

export async function emitTicketRouted(ctx: Ctx, payload: TicketRoutedPayload): Promise<void> {
  await recordEvent(ctx, {
    type: 'ticket.routed', subjectType: 'ticket', ticketId: payload.ticket_id,
    to: 'agent_name' in payload ? payload.agent_name : payload.team_name, data: { ...payload },
  });
}
