import type { Deps } from '../core/context.js';
import { SYSTEM_ACTOR } from '../core/context.js';
import { randomToken } from '../core/ids.js';
import { inTransaction } from '../db/transaction.js';
import { accessToken, loadConnector, SUBSCRIPTION_DAYS, targetOf, VENDOR_TIMEOUT_MS, webhookUrl, type AccountRow } from './connectors.js';
import { CALENDAR_API, vendorCall } from './vendor.js';

/**
 * The hourly `calendar-subscription-renewal` job (SPEC "Meeting rules" 6): every calendar
 * subscription that ends within the next 2 hours is extended by SUBSCRIPTION_DAYS (calendar_a
 * renews the subscription in place; calendar_b opens a new channel with a fresh token). Rows are
 * claimed with FOR UPDATE SKIP LOCKED, so two daemons never renew one twice. Idempotent, takes `now`.
 */
export const RENEW_AHEAD_MS = 2 * 3_600_000;

export async function renewSubscriptions(deps: Deps, now: Date): Promise<{ renewed: number; failed: number }> {
  const totals = { renewed: 0, failed: 0 };
  const due = await deps.db('connector_accounts').whereNotNull('subscription_id').where('subscription_expires_at', '<', new Date(now.getTime() + RENEW_AHEAD_MS))
    .select('tenant_id', 'id').orderBy('subscription_expires_at').limit(500)
    .comment('cross-tenant: the renewal job walks every tenant\'s subscriptions') as Array<{ tenant_id: string; id: string }>;
  for (const { tenant_id: tenantId, id } of due) {
    try {
      await inTransaction(deps, { tenantId, actor: SYSTEM_ACTOR, now }, async (ctx) => {
        const account = await ctx.trx('connector_accounts').where({ tenant_id: tenantId, id }).forUpdate().skipLocked().first() as AccountRow | undefined;
        if (!account?.subscription_id || !account.subscription_expires_at || account.subscription_expires_at.getTime() >= now.getTime() + RENEW_AHEAD_MS) return;
        if (account.provider !== 'calendar_a' && account.provider !== 'calendar_b') return;
        const connector = await loadConnector(ctx, account.provider);
        if (!connector) return;
        const token = await accessToken(ctx, account);
        const expiration = new Date(now.getTime() + SUBSCRIPTION_DAYS * 86_400_000);
        const renew = CALENDAR_API[account.provider].renew(account.subscription_id);
        const columns: Record<string, unknown> = { subscription_expires_at: expiration, updated_at: now };
        if (account.provider === 'calendar_a') {
          await vendorCall(targetOf(deps, connector), renew.method, renew.path, { token, json: { expirationDateTime: expiration.toISOString() }, timeoutMs: VENDOR_TIMEOUT_MS });
        } else {
          const channel = randomToken(16);
          const secret = randomToken(24);
          await vendorCall(targetOf(deps, connector), renew.method, renew.path, {
            token, json: { id: channel, type: 'web_hook', address: webhookUrl(deps, 'calendar_b'), token: secret, expiration: String(expiration.getTime()) }, timeoutMs: VENDOR_TIMEOUT_MS,
          });
          Object.assign(columns, { subscription_id: channel, subscription_secret_enc: deps.box.encrypt(secret) });
        }
        await ctx.trx('connector_accounts').where({ tenant_id: tenantId, id }).update(columns);
        totals.renewed += 1;
      });
    } catch (error) {
      totals.failed += 1;
      deps.log.warn({ err: error, tenant_id: tenantId, account_id: id }, 'calendar subscription not renewed');
    }
  }
  return totals;
}
