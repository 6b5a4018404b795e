import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { uuidv7 } from '../core/ids.js';
import { paginatePage, type Page, type PageInput } from '../core/pagination.js';
import { PushSubscriptionRecord } from './models.js';
import { outboundTargetProblem } from './outbound-target.js';
import { vapidKeys } from './vapid.js';
import type { PushSubscriptionCreate, PushSubscriptionOut } from './schemas.js';

/**
 * A staff user's browsers (CONTRACT §14): each subscribes for themselves and sees and removes only
 * their own subscriptions. A browser that subscribes again (same endpoint) updates its keys; a
 * shared browser whose next user subscribes moves to that user.
 */
export function vapidPublicKey(ctx: Ctx): { public_key: string } {
  return { public_key: vapidKeys(ctx.deps.config).publicKey };
}

function out(row: PushSubscriptionRecord): PushSubscriptionOut {
  return { id: row.id, endpoint: row.endpoint, created_at: toRfc3339(row.created_at)! };
}

function callerId(ctx: Ctx): string {
  if (!ctx.actor.userId) throw errors.forbidden('Push subscriptions belong to a signed-in staff user');
  return ctx.actor.userId;
}

export async function createSubscription(ctx: Ctx, input: PushSubscriptionCreate): Promise<PushSubscriptionOut> {
  const userId = callerId(ctx);
  const problems = [];
  const target = await outboundTargetProblem(input.endpoint, ctx.deps.config.webhooksAllowPrivate);
  if (target) problems.push({ field: 'endpoint', message: target });
  // p256dh: an uncompressed P-256 point (65 bytes); auth: a 16-byte secret (RFC 8291).
  const p256dh = Buffer.from(input.keys.p256dh, 'base64url');
  if (p256dh.length !== 65 || p256dh[0] !== 4) problems.push({ field: 'keys.p256dh', message: 'must be a base64url uncompressed P-256 public key (65 bytes)' });
  if (Buffer.from(input.keys.auth, 'base64url').length !== 16) problems.push({ field: 'keys.auth', message: 'must be a base64url 16-byte secret' });
  if (problems.length) throw errors.validation(problems);

  const row = {
    id: uuidv7(ctx.now.getTime()), tenant_id: ctx.tenantId, user_id: userId, endpoint: input.endpoint,
    p256dh: input.keys.p256dh, auth: input.keys.auth, created_at: ctx.now,
  };
  const [saved] = await ctx.trx('push_subscriptions').insert(row)
    .onConflict(['tenant_id', 'endpoint']).merge(['user_id', 'p256dh', 'auth']).returning('*') as PushSubscriptionRecord[];
  return out(saved!);
}

export async function listSubscriptions(ctx: Ctx, query: PageInput): Promise<Page<PushSubscriptionOut>> {
  const qb = PushSubscriptionRecord.scoped(ctx).where('push_subscriptions.user_id', callerId(ctx))
    .orderBy('push_subscriptions.created_at', 'desc').orderBy('push_subscriptions.id', 'desc');
  return paginatePage<PushSubscriptionRecord, PushSubscriptionOut>(query, qb, out);
}

export async function deleteSubscription(ctx: Ctx, id: string): Promise<void> {
  const deleted = await PushSubscriptionRecord.scoped(ctx).where({ id, user_id: callerId(ctx) }).delete();
  if (!deleted) throw errors.notFound('push subscription', id);
}
