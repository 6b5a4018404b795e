import type { Ctx, Deps } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { hmacBase64url, safeEqual } from '../core/crypto.js';
import { randomToken, uuidv7 } from '../core/ids.js';
import { scoped } from '../db/tenant-scope.js';
import { recordAudit } from '../audit/service.js';
import { requireFeature } from '../licensing/features.js';
import { urlProblem } from '../webhooks/url-guard.js';
import { CALENDAR_API, isCalendar, vendorCall, VendorError, type ConnectorProvider } from './vendor.js';
import type { ConnectorOut, ConnectorPut, ConnectedAccount } from './connector-schemas.js';

/**
 * Connectors (SPEC "Meeting rules" 6): an administrator registers each product once (client id and
 * secret, base URL); each agent connects a personal account through OAuth 2.0 (authorization code).
 * Tokens are encrypted at rest and refreshed on demand; a calendar account also holds a change
 * subscription, renewed hourly by the `calendar-subscription-renewal` job.
 */
export const VENDOR_TIMEOUT_MS = 5000;
export const SUBSCRIPTION_DAYS = 3;
const STATE_TTL_MS = 10 * 60_000;

interface ConnectorRow { tenant_id: string; provider: ConnectorProvider; client_id: string; client_secret_enc: string; base_url: string; created_at: Date; updated_at: Date }
export interface AccountRow {
  tenant_id: string; id: string; user_id: string; provider: ConnectorProvider; access_token_enc: string; refresh_token_enc: string | null;
  expires_at: Date | null; subscription_id: string | null; subscription_secret_enc: string | null; subscription_expires_at: Date | null;
  last_notified_at: Date | null;
}

const out = (row: ConnectorRow): ConnectorOut => ({
  provider: row.provider, client_id: row.client_id, client_secret: '********', base_url: row.base_url,
  created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)!,
});

export const redirectUri = (deps: Deps, provider: string) => `${deps.config.siteUrl}/connectors/${provider}/callback`;
export const webhookUrl = (deps: Deps, provider: string) => `${deps.config.siteUrl}/api/v1/integrations/${provider}/webhook`;
export const targetOf = (deps: Deps, row: { base_url: string }) => ({ baseUrl: row.base_url, allowPrivate: deps.config.webhooksAllowPrivate });

export async function loadConnector(ctx: Ctx, provider: ConnectorProvider): Promise<ConnectorRow | null> {
  return (await scoped(ctx, 'meeting_connectors').where('provider', provider).first()) as ConnectorRow | undefined ?? null;
}

export async function listConnectors(ctx: Ctx): Promise<{ data: ConnectorOut[] }> {
  await requireFeature(ctx, 'meetings');
  const rows = await scoped(ctx, 'meeting_connectors').orderBy('provider') as ConnectorRow[];
  return { data: rows.map(out) };
}

export async function putConnector(ctx: Ctx, provider: ConnectorProvider, input: ConnectorPut): Promise<ConnectorOut> {
  await requireFeature(ctx, 'meetings');
  const problem = await urlProblem(input.base_url, ctx.deps.config.webhooksAllowPrivate, 'base_url');
  if (problem) throw errors.validation([problem]);
  const existing = await loadConnector(ctx, provider);
  const columns = { client_id: input.client_id, client_secret_enc: ctx.deps.box.encrypt(input.client_secret), base_url: input.base_url.replace(/\/+$/, ''), updated_at: ctx.now };
  const [row] = existing
    ? await scoped(ctx, 'meeting_connectors').where('provider', provider).update(columns).returning('*') as ConnectorRow[]
    : await ctx.trx('meeting_connectors').insert({ tenant_id: ctx.tenantId, provider, ...columns, created_at: ctx.now }).returning('*') as ConnectorRow[];
  await recordAudit(ctx, { action: existing ? 'connector.updated' : 'connector.registered', resourceType: 'connector', resourceId: null, changes: { provider, client_id: input.client_id, base_url: row!.base_url } });
  return out(row!);
}

export async function deleteConnector(ctx: Ctx, provider: ConnectorProvider): Promise<void> {
  await requireFeature(ctx, 'meetings');
  if (!await loadConnector(ctx, provider)) throw errors.notFound('connector', provider);
  await scoped(ctx, 'meeting_connectors').where('provider', provider).delete();
  await recordAudit(ctx, { action: 'connector.removed', resourceType: 'connector', changes: { provider } });
}

function stateFor(ctx: Ctx, provider: string, userId: string, expires: number): string {
  const payload = `${ctx.tenantId}.${userId}.${provider}.${expires}`;
  return `${expires}.${hmacBase64url(ctx.deps.box.derive('helpdesk:connector-oauth-state'), payload)}`;
}

/** Step 1: where to send the agent's browser (the state ties the answer to this user, 10 minutes). */
export async function authorizeUrl(ctx: Ctx, provider: ConnectorProvider): Promise<{ authorize_url: string; state: string }> {
  await requireFeature(ctx, 'meetings');
  if (!ctx.actor.userId) throw errors.forbidden('A connector account belongs to a user');
  const connector = await loadConnector(ctx, provider);
  if (!connector) throw errors.notFound('connector', provider);
  const state = stateFor(ctx, provider, ctx.actor.userId, ctx.now.getTime() + STATE_TTL_MS);
  const url = new URL(`${connector.base_url}/oauth/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: connector.client_id, redirect_uri: redirectUri(ctx.deps, provider), state }).toString();
  return { authorize_url: url.toString(), state };
}

interface TokenAnswer { access_token?: string; refresh_token?: string; expires_in?: number }

async function tokenRequest(ctx: Ctx, connector: ConnectorRow, form: Record<string, string>): Promise<TokenAnswer> {
  const answer = await vendorCall<TokenAnswer>(targetOf(ctx.deps, connector), 'POST', '/oauth/token', {
    form: { ...form, client_id: connector.client_id, client_secret: ctx.deps.box.decrypt(connector.client_secret_enc) }, timeoutMs: VENDOR_TIMEOUT_MS,
  });
  if (!answer?.access_token) throw new VendorError('the token endpoint returned no access_token');
  return answer;
}

const accountOut = (row: AccountRow): ConnectedAccount => ({
  provider: row.provider, connected: true, expires_at: toRfc3339(row.expires_at), subscription_expires_at: toRfc3339(row.subscription_expires_at),
});

/** Step 2: the code from the vendor's redirect becomes the user's encrypted tokens (and, for a calendar, a subscription). */
export async function connectAccount(ctx: Ctx, provider: ConnectorProvider, input: { code: string; state: string }): Promise<ConnectedAccount> {
  await requireFeature(ctx, 'meetings');
  if (!ctx.actor.userId) throw errors.forbidden('A connector account belongs to a user');
  const connector = await loadConnector(ctx, provider);
  if (!connector) throw errors.notFound('connector', provider);
  const expires = Number(input.state.split('.')[0]);
  if (!Number.isFinite(expires) || expires < ctx.now.getTime() || !safeEqual(input.state, stateFor(ctx, provider, ctx.actor.userId, expires))) {
    throw errors.invalid('state', 'is not a state this helpdesk issued to you, or it has expired');
  }
  let token: TokenAnswer;
  try {
    token = await tokenRequest(ctx, connector, { grant_type: 'authorization_code', code: input.code, redirect_uri: redirectUri(ctx.deps, provider) });
  } catch (error) {
    throw errors.invalid('code', `was not accepted by ${provider}: ${(error as Error).message}`);
  }
  const columns: Record<string, unknown> = {
    access_token_enc: ctx.deps.box.encrypt(token.access_token!),
    refresh_token_enc: token.refresh_token ? ctx.deps.box.encrypt(token.refresh_token) : null,
    expires_at: token.expires_in ? new Date(ctx.now.getTime() + token.expires_in * 1000) : null,
    updated_at: ctx.now,
  };
  if (isCalendar(provider)) Object.assign(columns, await subscribe(ctx, connector, token.access_token!));
  await scoped(ctx, 'connector_accounts').where({ user_id: ctx.actor.userId, provider }).delete();
  const [row] = await ctx.trx('connector_accounts').insert({
    tenant_id: ctx.tenantId, id: uuidv7(ctx.now.getTime()), user_id: ctx.actor.userId, provider, created_at: ctx.now, ...columns,
  }).returning('*') as AccountRow[];
  await recordAudit(ctx, { action: 'connector.account_connected', resourceType: 'connector', changes: { provider, user_id: ctx.actor.userId } });
  return accountOut(row!);
}

async function subscribe(ctx: Ctx, connector: ConnectorRow, accessToken: string): Promise<Record<string, unknown>> {
  const provider = connector.provider as 'calendar_a' | 'calendar_b';
  const secret = randomToken(24);
  const expiration = new Date(ctx.now.getTime() + SUBSCRIPTION_DAYS * 86_400_000);
  const api = CALENDAR_API[provider];
  const channelId = randomToken(16);
  const body = provider === 'calendar_a'
    ? { changeType: 'created,updated,deleted', notificationUrl: webhookUrl(ctx.deps, provider), resource: '/me/events', clientState: secret, expirationDateTime: expiration.toISOString() }
    : { id: channelId, type: 'web_hook', address: webhookUrl(ctx.deps, provider), token: secret, expiration: String(expiration.getTime()) };
  let answer: { id?: string; expirationDateTime?: string; expiration?: string } | undefined;
  try {
    answer = await vendorCall(targetOf(ctx.deps, connector), 'POST', api.subscribe, { token: accessToken, json: body, timeoutMs: VENDOR_TIMEOUT_MS });
  } catch (error) {
    throw errors.invalid('code', `the ${provider} subscription failed: ${(error as Error).message}`);
  }
  const id = provider === 'calendar_a' ? answer?.id : channelId;
  const until = answer?.expirationDateTime ? new Date(answer.expirationDateTime) : answer?.expiration ? new Date(Number(answer.expiration)) : expiration;
  return { subscription_id: id ?? null, subscription_secret_enc: ctx.deps.box.encrypt(secret), subscription_expires_at: Number.isNaN(until.getTime()) ? expiration : until };
}

export async function myAccounts(ctx: Ctx): Promise<{ data: ConnectedAccount[] }> {
  await requireFeature(ctx, 'meetings');
  const rows = await scoped(ctx, 'connector_accounts').where('user_id', ctx.actor.userId ?? '00000000-0000-0000-0000-000000000000').orderBy('provider') as AccountRow[];
  return { data: rows.map(accountOut) };
}

export async function disconnectAccount(ctx: Ctx, provider: ConnectorProvider): Promise<void> {
  await requireFeature(ctx, 'meetings');
  const deleted = await scoped(ctx, 'connector_accounts').where({ user_id: ctx.actor.userId ?? '00000000-0000-0000-0000-000000000000', provider }).delete();
  if (!deleted) throw errors.notFound('connector account', provider);
  await recordAudit(ctx, { action: 'connector.account_disconnected', resourceType: 'connector', changes: { provider, user_id: ctx.actor.userId } });
}

export async function accountOf(ctx: Pick<Ctx, 'trx' | 'tenantId'>, userId: string, provider: ConnectorProvider): Promise<AccountRow | null> {
  return (await scoped(ctx as Ctx, 'connector_accounts').where({ user_id: userId, provider }).first()) as AccountRow | undefined ?? null;
}

/** A valid access token: refreshed (and stored again, encrypted) when it expires within a minute. */
export async function accessToken(ctx: Ctx, account: AccountRow): Promise<string> {
  if (!account.expires_at || account.expires_at.getTime() - ctx.now.getTime() > 60_000 || !account.refresh_token_enc) {
    return ctx.deps.box.decrypt(account.access_token_enc);
  }
  const connector = await loadConnector(ctx, account.provider);
  if (!connector) throw new VendorError(`${account.provider} is no longer registered`);
  const token = await tokenRequest(ctx, connector, { grant_type: 'refresh_token', refresh_token: ctx.deps.box.decrypt(account.refresh_token_enc) });
  const columns = {
    access_token_enc: ctx.deps.box.encrypt(token.access_token!),
    refresh_token_enc: token.refresh_token ? ctx.deps.box.encrypt(token.refresh_token) : account.refresh_token_enc,
    expires_at: token.expires_in ? new Date(ctx.now.getTime() + token.expires_in * 1000) : null,
    updated_at: ctx.now,
  };
  await scoped(ctx, 'connector_accounts').where('id', account.id).update(columns);
  Object.assign(account, columns);
  return token.access_token!;
}
