import { toRfc3339 } from '../core/clock.js';
import type { Ticket, TicketSla } from './models.js';
import type { TicketOut } from './schemas.js';

/** Until the SLA engine has computed a ticket's targets, each reads `none`. */
const NO_TARGET = { due_at: null, met_at: null, breached_at: null, status: 'none' } as const;
export const EMPTY_SLA: TicketSla = { paused: false, first_response: NO_TARGET, next_response: NO_TARGET, resolution: NO_TARGET };

/**
 * The columns `ticketOut` reads, for reads that only answer with tickets (the list, GET): the
 * rest of the row is never parsed. `sla_state`, the SLA engine's clock, is ~1 kB of JSON per
 * ticket that a list page would otherwise parse 25 times and throw away (docs/performance.md).
 */
export const TICKET_OUT_COLUMNS = [
  'id', 'ticket_number', 'subject', 'status_id', 'priority_id', 'type_id', 'requester_id', 'assigned_agent_id', 'team_id',
  'organization_id', 'channel', 'tags', 'custom_fields', 'summary', 'resolution_code', 'sla_due_at', 'sla', 'first_responded_at',
  'resolved_at', 'closed_at', 'snoozed_until', 'merged_into_id', 'csat', 'created_at', 'updated_at',
].map((column) => `tickets.${column}`);

/** A ticket as the API shows it (CONTRACT §5). */
export function ticketOut(t: Ticket): TicketOut {
  return {
    id: t.id,
    ticket_number: Number(t.ticket_number),
    subject: t.subject,
    status_id: t.status_id,
    priority_id: t.priority_id,
    type_id: t.type_id,
    requester_id: t.requester_id,
    assigned_agent_id: t.assigned_agent_id,
    team_id: t.team_id,
    organization_id: t.organization_id,
    channel: t.channel,
    tags: t.tags ?? [],
    custom_fields: t.custom_fields ?? {},
    summary: t.summary,
    resolution_code: t.resolution_code,
    sla_due_at: toRfc3339(t.sla_due_at),
    sla: t.sla ?? EMPTY_SLA,
    first_responded_at: toRfc3339(t.first_responded_at),
    resolved_at: toRfc3339(t.resolved_at),
    closed_at: toRfc3339(t.closed_at),
    snoozed_until: toRfc3339(t.snoozed_until),
    merged_into_id: t.merged_into_id,
    // The latest CSAT rating, kept on the ticket by the csat area (null until one is given).
    csat: t.csat ?? null,
    created_at: toRfc3339(t.created_at)!,
    updated_at: toRfc3339(t.updated_at)!,
  };
}
