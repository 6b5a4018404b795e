import type { Ctx } from '../core/context.js';
import type { EventRecord } from '../events/models.js';
import type { CompanionRows } from '../db/companion-rows.js';
import { isEventType } from '../events/types.js';
import { WebhookDelivery, WebhookEndpoint } from './models.js';
import { cachedConfig } from '../db/config-cache.js';

/**
 * The transactional outbox (SPEC "Delivery rules" 3): registered as the event's companion rows
 * (src/events/consumers.ts), one pending delivery per active endpoint of the tenant subscribed to
 * the event type is written by the very statement that stores the event. A rolled-back change
 * therefore leaves no delivery; a committed one leaves every delivery it needs, and the commit's
 * NOTIFY wakes the dispatchers.
 */
export async function deliveryRows(ctx: Ctx, event: Pick<EventRecord, 'id' | 'type'>): Promise<CompanionRows | null> {
  if (!isEventType(event.type)) return null;
  const endpoints: Array<{ id: string }> = await cachedConfig(ctx, `webhooks:subscribed:${event.type}`, async () =>
    (await WebhookEndpoint.scoped(ctx).where('active', true).whereRaw('? = any(events)', [event.type]).select('id')).map((e) => ({ id: e.id })));
  if (!endpoints.length) return null;
  // Each row gets its tenant and a new id from the event's statement (src/db/companion-rows.ts).
  return { table: WebhookDelivery.tableName, rows: endpoints.map((endpoint) => ({
    endpoint_id: endpoint.id,
    event_id: event.id,
    event: event.type,
    status: 'pending',
    attempt: 0,
    next_attempt_at: ctx.now,
    created_at: ctx.now,
    updated_at: ctx.now,
  })) };
}
