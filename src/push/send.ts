import webpush from 'web-push';
import { systemNow } from '../core/clock.js';
import { request } from 'undici';
import type { Ctx, Deps } from '../core/context.js';
import { outboundTargetProblem } from './outbound-target.js';
import { vapidKeys } from './vapid.js';

/**
 * Sends queued pushes (RFC 8030) with VAPID (RFC 8292) and an `aes128gcm`-encrypted payload
 * (RFC 8291), as web-push prepares them; undici sends the request (web-push's own sender always
 * speaks TLS), with a 10 s time-out and no redirects. Rows are claimed with FOR UPDATE SKIP LOCKED,
 * so several daemons and the job never send one twice.
 * - 2xx: sent. 404/410: the subscription is gone; it is deleted (and its queued pushes with it).
 * - anything else: retried after 1 and 5 minutes, then `failed`.
 */
const BATCH = 20;
const RETRY_DELAYS_MS = [60_000, 5 * 60_000];
const TIMEOUT_MS = 10_000;

interface Claimed {
  tenant_id: string; id: string; subscription_id: string; payload: unknown; urgency: string; ttl_seconds: number;
  attempts: number; endpoint: string; p256dh: string; auth: string;
}

type Outcome = { kind: 'sent' } | { kind: 'gone'; status: number } | { kind: 'retry'; error: string } | { kind: 'refused'; error: string };

async function sendOne(deps: Deps, row: Claimed): Promise<Outcome> {
  const problem = await outboundTargetProblem(row.endpoint, deps.config.webhooksAllowPrivate);
  if (problem) return { kind: 'refused', error: `endpoint ${problem}` };
  const keys = vapidKeys(deps.config);
  const details = webpush.generateRequestDetails(
    { endpoint: row.endpoint, keys: { p256dh: row.p256dh, auth: row.auth } },
    JSON.stringify(row.payload),
    {
      vapidDetails: { subject: `mailto:${deps.config.adminEmail}`, publicKey: keys.publicKey, privateKey: keys.privateKey },
      TTL: row.ttl_seconds,
      urgency: row.urgency as webpush.Urgency,
      contentEncoding: 'aes128gcm',
    },
  );
  try {
    const response = await request(details.endpoint, {
      method: 'POST',
      headers: details.headers as Record<string, string>,
      body: details.body ?? undefined,
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
      maxRedirections: 0,
    } as Parameters<typeof request>[1]);
    await response.body.dump();
    if (response.statusCode >= 200 && response.statusCode < 300) return { kind: 'sent' };
    if (response.statusCode === 404 || response.statusCode === 410) return { kind: 'gone', status: response.statusCode };
    return { kind: 'retry', error: `push service answered ${response.statusCode}` };
  } catch (error) {
    return { kind: 'retry', error: (error as Error).message.slice(0, 500) };
  }
}

/** Sends due pushes (of one tenant, or of all for the job) until none are left; answers the counts. */
export async function drainPushes(deps: Deps, now: Date, options: { tenantId?: string } = {}): Promise<Record<string, number>> {
  const counts = { sent: 0, gone: 0, retried: 0, failed: 0 };
  for (;;) {
    const handled = await deps.db.transaction(async (trx) => {
      const query = trx('push_messages as m')
        .join('push_subscriptions as s', function () { this.on('s.tenant_id', 'm.tenant_id').andOn('s.id', 'm.subscription_id'); })
        .where('m.status', 'pending').where('m.next_attempt_at', '<=', now)
        .orderBy('m.next_attempt_at').limit(BATCH).forUpdate('m').skipLocked()
        .select('m.tenant_id', 'm.id', 'm.subscription_id', 'm.payload', 'm.urgency', 'm.ttl_seconds', 'm.attempts', 's.endpoint', 's.p256dh', 's.auth');
      if (options.tenantId) query.where('m.tenant_id', options.tenantId);
      else query.comment('cross-tenant: the push sender drains every tenant\'s queue');
      const rows = await query as Claimed[];
      for (const row of rows) {
        const outcome = await sendOne(deps, row);
        const mine = trx('push_messages').where({ tenant_id: row.tenant_id, id: row.id });
        if (outcome.kind === 'sent') {
          counts.sent += 1;
          await mine.update({ status: 'sent', attempts: row.attempts + 1, sent_at: now, last_error: null });
        } else if (outcome.kind === 'gone') {
          counts.gone += 1;
          await trx('push_subscriptions').where({ tenant_id: row.tenant_id, id: row.subscription_id }).delete();
        } else {
          const attempts = row.attempts + 1;
          const delay = outcome.kind === 'retry' ? RETRY_DELAYS_MS[attempts - 1] : undefined;
          if (delay === undefined) counts.failed += 1;
          else counts.retried += 1;
          await mine.update(delay === undefined
            ? { status: 'failed', attempts, last_error: outcome.error }
            : { attempts, last_error: outcome.error, next_attempt_at: new Date(now.getTime() + delay) });
        }
      }
      return rows.length;
    });
    if (handled < BATCH) return counts;
  }
}

const scheduled = new WeakSet<object>();

/**
 * After the change commits, wake the sender for this tenant without making the request wait
 * (the effect only starts it). Once per transaction.
 */
export function schedulePushDrain(ctx: Ctx): void {
  if (scheduled.has(ctx)) return;
  scheduled.add(ctx);
  const { deps, tenantId } = ctx;
  ctx.afterCommit(() => {
    setImmediate(() => {
      drainPushes(deps, systemNow(), { tenantId }).catch((error) => deps.log.error({ err: error }, 'push send failed'));
    });
  });
}

/** Sent and failed pushes are kept this long (for inspection), then purged by the job. */
const KEEP_MS = 7 * 24 * 3600 * 1000;

/**
 * The `push-send` job: everything due, in every tenant (retries, and pushes a crashed process
 * left), then the purge of old sent and failed rows.
 */
export async function pushSendJob(deps: Deps, now: Date): Promise<Record<string, unknown>> {
  const counts = await drainPushes(deps, now);
  const purged = await deps.db('push_messages').whereIn('status', ['sent', 'failed']).where('created_at', '<', new Date(now.getTime() - KEEP_MS))
    .comment('cross-tenant: the job purges every tenant\'s old pushes').delete();
  return { ...counts, purged };
}
