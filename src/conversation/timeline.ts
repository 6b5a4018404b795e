import type { Ctx } from '../core/context.js';
import { toRfc3339 } from '../core/clock.js';
import { paginateUnbounded, type CursorMeta, type Page } from '../core/pagination.js';
import { EventRecord } from '../events/models.js';
import { loadVisibleTicket } from './ticket-port.js';
import type { TimelineEvent, TimelineQuery } from './schemas.js';

/**
 * A ticket's timeline: its events from the event store, oldest first (CONTRACT §5). The type is
 * the webhook event name without `ticket.` (`status_changed`), system notes as they are
 * (`meeting_scheduled`). Staff only (the route says so): it is the audit trail, private notes
 * included, as in Zendesk's ticket audits; customers follow their ticket through its messages.
 */
function eventOut(row: EventRecord): TimelineEvent {
  return {
    id: row.id,
    type: row.type.startsWith('ticket.') ? row.type.slice('ticket.'.length) : row.type,
    from: row.from_value,
    to: row.to_value,
    actor_id: row.actor_id,
    actor_name: row.actor_name,
    data: row.data ?? {},
    created_at: toRfc3339(row.created_at)!,
  };
}

export async function ticketTimeline(ctx: Ctx, ticketId: string, query: TimelineQuery): Promise<Page<TimelineEvent, CursorMeta>> {
  const ticket = await loadVisibleTicket(ctx, ticketId);
  const qb = EventRecord.scoped(ctx).where('events.ticket_id', ticket.id).toKnexQuery();
  return paginateUnbounded<EventRecord, TimelineEvent>(query, qb, { table: 'events', direction: 'asc' }, eventOut);
}
