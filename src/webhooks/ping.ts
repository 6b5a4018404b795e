import type { Ctx } from '../core/context.js';
import { toRfc3339 } from '../core/clock.js';
import { uuidv7 } from '../core/ids.js';
import { loadEndpoint } from './endpoints.js';
import { envelopeBody, WebhookSender } from './sender.js';
import type { PingResult } from './schemas.js';

/**
 * The synchronous test ping (CONTRACT §6): `{id, event: "ping", created_at, tenant_id,
 * data: {endpoint_id}}`, signed and guarded like any delivery, sent once (no retry, no log entry)
 * whether the endpoint is active or not; the answer says how the receiver took it.
 */
export async function pingEndpoint(ctx: Ctx, id: string): Promise<PingResult> {
  const endpoint = await loadEndpoint(ctx, id);
  const pingId = uuidv7(ctx.now.getTime());
  const body = envelopeBody({ id: pingId, event: 'ping', created_at: toRfc3339(ctx.now)!, tenant_id: ctx.tenantId, data: { endpoint_id: endpoint.id } });
  const sender = new WebhookSender({ allowPrivate: ctx.deps.config.webhooksAllowPrivate, connectionsPerOrigin: 1 });
  try {
    return await sender.send({
      url: endpoint.url, secret: ctx.deps.box.decrypt(endpoint.secret_enc), event: 'ping', attemptId: uuidv7(ctx.now.getTime()), body, staticHeaders: endpoint.headers ?? {},
    });
  } finally {
    await sender.close();
  }
}
