import type { Ctx } from '../../core/context.js';
import { recordEvent } from '../record.js';

/**
 * The events of the spec's "same shape": `{ticket_id, from, to, actor_id, actor_name}`, where
 * `from` and `to` are what a person reads (status names, agent names, a collaborator's name or
 * email, ticket ids of a merge; for `ticket.extension_action` the extension and action, then the
 * execution summary). One emitter for all of them, so the shape cannot drift between types.
 */
export const TICKET_CHANGE_TYPES = [
  'ticket.status_changed',
  'ticket.priority_changed',
  'ticket.type_changed',
  'ticket.assignee_changed',
  'ticket.team_changed',
  'ticket.collaborator_added',
  'ticket.collaborator_removed',
  'ticket.merged_into',
  'ticket.merged_from',
  'ticket.extension_action',
] as const;

export type TicketChangeType = (typeof TICKET_CHANGE_TYPES)[number];

export interface TicketChange {
  ticketId: string;
  from: string | null;
  to: string | null;
}

export interface TicketChangePayload {
  ticket_id: string;
  from: string | null;
  to: string | null;
  actor_id: string | null;
  actor_name: string | null;
}

export async function emitTicketChange(ctx: Ctx, type: TicketChangeType, change: TicketChange): Promise<void> {
  const data: TicketChangePayload = {
    ticket_id: change.ticketId, from: change.from, to: change.to, actor_id: ctx.actor.userId, actor_name: ctx.actor.name,
  };
  await recordEvent(ctx, { type, subjectType: 'ticket', ticketId: change.ticketId, from: change.from, to: change.to, data: { ...data } });
}
