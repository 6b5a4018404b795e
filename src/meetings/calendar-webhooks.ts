import type { Deps } from '../core/context.js';
import { errors } from '../core/errors.js';
import { safeEqual } from '../core/crypto.js';
import type { CalendarProvider } from './vendor.js';

/**
 * Inbound calendar notifications (SPEC "Meeting rules" 6 and security 8). The subscription id names
 * the connected account (and so the tenant); the notification is believed only when it carries the
 * subscription's secret: the client state (calendar_a, in the body) or the channel token (calendar_b,
 * in `X-Goog-Channel-Token` with the channel in `X-Goog-Channel-ID`). A verified notification stamps
 * the account's `last_notified_at`; busy blocks are read live, so nothing else needs refreshing.
 * calendar_a's subscription handshake (`?validationToken=`) is answered with the token as text.
 */
interface Row { tenant_id: string; id: string; subscription_secret_enc: string | null }

async function verify(deps: Deps, provider: CalendarProvider, subscriptionId: string | undefined, secret: string | undefined): Promise<Row | null> {
  if (!subscriptionId || !secret) return null;
  const row = await deps.db('connector_accounts').where({ provider, subscription_id: subscriptionId })
    .first('tenant_id', 'id', 'subscription_secret_enc')
    .comment('cross-tenant: the subscription id decides the tenant') as Row | undefined;
  if (!row?.subscription_secret_enc) return null;
  return safeEqual(deps.box.decrypt(row.subscription_secret_enc), secret) ? row : null;
}

async function stamp(deps: Deps, rows: Row[], now: Date): Promise<void> {
  for (const row of rows) {
    await deps.db('connector_accounts').where({ tenant_id: row.tenant_id, id: row.id }).update({ last_notified_at: now });
  }
}

export async function calendarAWebhook(deps: Deps, input: { validationToken?: string; value?: Array<{ subscriptionId?: string; clientState?: string }> }, now: Date): Promise<{ text: string }> {
  if (input.validationToken !== undefined) return { text: input.validationToken };
  const verified: Row[] = [];
  for (const item of input.value ?? []) {
    const row = await verify(deps, 'calendar_a', item.subscriptionId, item.clientState);
    if (row) verified.push(row);
  }
  if (!verified.length) throw errors.forbidden('The notification carries no known subscription with its client state');
  await stamp(deps, verified, now);
  return { text: `accepted ${verified.length}` };
}

export async function calendarBWebhook(deps: Deps, headers: Record<string, string | string[] | undefined>, now: Date): Promise<{ text: string }> {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const row = await verify(deps, 'calendar_b', one(headers['x-goog-channel-id']), one(headers['x-goog-channel-token']));
  if (!row) throw errors.forbidden('The notification carries no known channel with its token');
  await stamp(deps, [row], now);
  return { text: 'accepted 1' };
}
