/**
 * The 26 outbound webhook event types of the spec ("Events" → "Outbound webhook events"), in the
 * spec's order. The one list: an endpoint's `events` field validates against it, and every type
 * has a typed emitter in src/events/emit/.
 */
export const EVENT_TYPES = [
  'ticket.created',
  'ticket.message_created',
  'ticket.routed',
  'ticket.status_changed',
  'ticket.priority_changed',
  'ticket.type_changed',
  'ticket.assignee_changed',
  'ticket.team_changed',
  'ticket.collaborator_added',
  'ticket.collaborator_removed',
  'ticket.merged_into',
  'ticket.merged_from',
  'ticket.sla_breached',
  'ticket.first_response_breached',
  'ticket.next_response_breached',
  'ticket.sla_warning',
  'ticket.csat_rating_submitted',
  'ticket.extension_action',
  'customer.created',
  'customer.updated',
  'organization.created',
  'organization.updated',
  'extension.installed',
  'extension.uninstalled',
  'extension.enabled',
  'extension.disabled',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}
