import type { Ctx } from '../../core/context.js';
import { recordEvent } from '../record.js';

/**
 * SLA events: fired by the SLA clock, hence actor null. `from` is the breached (or, for a warning,
 * the impending) deadline; `to` is empty; `at` is the instant the clock reached it.
 */
export const SLA_EVENT_TYPES = [
  'ticket.sla_breached',
  'ticket.first_response_breached',
  'ticket.next_response_breached',
  'ticket.sla_warning',
] as const;

export type SlaEventType = (typeof SLA_EVENT_TYPES)[number];

export async function emitSlaEvent(ctx: Ctx, type: SlaEventType, input: { ticketId: string; target: string; due: string | null; at: string | null }): Promise<void> {
  await recordEvent(ctx, {
    type, subjectType: 'ticket', ticketId: input.ticketId, from: input.due, to: null, actor: null,
    data: { ticket_id: input.ticketId, target: input.target, from: input.due, to: null, at: input.at, actor_id: null, actor_name: null },
  });
}
