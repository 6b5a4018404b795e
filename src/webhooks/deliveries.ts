import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { paginateUnbounded, type CursorMeta, type Page } from '../core/pagination.js';
import { scoped } from '../db/tenant-scope.js';
import { recordAudit } from '../audit/service.js';
import { WebhookDelivery } from './models.js';
import { loadEndpoint } from './endpoints.js';
import type { DeliveryListQuery, DeliveryOut, RetryResult } from './schemas.js';

/** The delivery log of an endpoint and manual retries (SPEC "Outbound webhook delivery"). */
export const WAKE_CHANNEL = 'helpdesk_webhooks';

export function deliveryOut(row: WebhookDelivery): DeliveryOut {
  return {
    delivery_id: row.id,
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event: row.event,
    status: row.status,
    attempt: row.attempt,
    attempt_id: row.attempt_id,
    status_code: row.status_code,
    latency_ms: row.latency_ms,
    error: row.error,
    next_attempt_at: toRfc3339(row.next_attempt_at),
    created_at: toRfc3339(row.created_at)!,
    delivered_at: toRfc3339(row.delivered_at),
  };
}

/** Newest first, by cursor (or page); optionally one status. */
export async function listDeliveries(ctx: Ctx, endpointId: string, query: DeliveryListQuery): Promise<Page<DeliveryOut, CursorMeta>> {
  await loadEndpoint(ctx, endpointId);
  const qb = scoped(ctx, 'webhook_deliveries').where('webhook_deliveries.endpoint_id', endpointId);
  if (query.status) qb.where('webhook_deliveries.status', query.status);
  return paginateUnbounded<WebhookDelivery, DeliveryOut>(query, qb, { table: 'webhook_deliveries' }, deliveryOut);
}

/** Wakes the dispatchers at commit (NOTIFY is transactional), so a retry goes out at once. */
async function wakeDispatchers(ctx: Ctx): Promise<void> {
  await ctx.trx.raw('select pg_notify(?, ?)', [WAKE_CHANNEL, ctx.tenantId]);
}

const RETRYABLE = ['failed', 'dead'];

/** Columns that put a delivery back to pending for an immediate attempt with a fresh ladder. */
function requeued(ctx: Ctx) {
  // A fresh attempt_id claim: an attempt still in flight can no longer record over the new ladder.
  return { status: 'pending', attempt: 0, attempt_id: null, next_attempt_at: ctx.now, updated_at: ctx.now };
}

export async function retryDelivery(ctx: Ctx, deliveryId: string, endpointId?: string): Promise<DeliveryOut> {
  const query = WebhookDelivery.scoped(ctx).where('id', deliveryId).forUpdate();
  if (endpointId) {
    await loadEndpoint(ctx, endpointId);
    query.where('endpoint_id', endpointId);
  }
  const row = await query.first();
  if (!row) throw errors.notFound('webhook_delivery', deliveryId);
  if (!RETRYABLE.includes(row.status)) {
    throw errors.conflict(`Delivery ${deliveryId} is ${row.status}; only failed or dead deliveries can be retried`, { status: row.status });
  }
  const [updated] = await WebhookDelivery.scoped(ctx).where('id', deliveryId).patch(requeued(ctx) as never).returning('*') as unknown as WebhookDelivery[];
  await recordAudit(ctx, { action: 'webhook_delivery.retried', resourceType: 'webhook_delivery', resourceId: deliveryId, changes: { endpoint_id: row.endpoint_id, from: row.status } });
  await wakeDispatchers(ctx);
  return deliveryOut(updated!);
}

/** Every `status` delivery of an endpoint back to pending (`helpdesk webhooks retry --endpoint`). */
export async function retryEndpointDeliveries(ctx: Ctx, endpointId: string, status: 'failed' | 'dead'): Promise<RetryResult> {
  await loadEndpoint(ctx, endpointId);
  const rows = await scoped(ctx, 'webhook_deliveries').where({ endpoint_id: endpointId, status }).update(requeued(ctx)).returning('id') as Array<{ id: string }>;
  const ids = rows.map((r) => r.id);
  if (ids.length) {
    await recordAudit(ctx, { action: 'webhook_delivery.retried', resourceType: 'webhook_endpoint', resourceId: endpointId, changes: { from: status, count: ids.length } });
    await wakeDispatchers(ctx);
  }
  return { retried: ids.length, delivery_ids: ids };
}
