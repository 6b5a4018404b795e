import type { Ctx, Deps } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { sha256Hex } from '../core/crypto.js';
import { uuidv7 } from '../core/ids.js';
import { paginatePage, type Page } from '../core/pagination.js';
import { scoped } from '../db/tenant-scope.js';
import { recordAudit } from '../audit/service.js';
import { urlProblem } from '../webhooks/url-guard.js';
import type { AdapterSource, ChannelName } from './adapter.js';
import { ADAPTERS } from './adapters/index.js';
import type { ChannelSourceCreate, ChannelSourceListQuery, ChannelSourceOut, ChannelSourceUpdate } from './schemas.js';

/**
 * Channel sources (CONTRACT §17): one connected instance of a messaging or social channel. The
 * adapter's key list decides which config keys a channel takes, which are required and which are
 * secrets; secrets are stored encrypted (one AES-GCM blob of a JSON object) and read back masked.
 * The columns the public webhooks look sources up by (`lookup_key`, `token_hash`,
 * `verify_token_hash`) are kept in step with the config here.
 */
export interface SourceRow {
  tenant_id: string; id: string; channel: ChannelName; name: string; config: Record<string, string>; secrets_enc: string | null;
  status: 'active' | 'error' | 'disconnected'; last_error: string | null; lookup_key: string | null; token_hash: string | null;
  verify_token_hash: string | null; created_at: Date; updated_at: Date;
}

const MASK = '********';
/** A config key every channel takes (beyond the spec): the bot flow that answers first on the source. */
const BOT_FLOW_KEY = 'bot_flow_id';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function maskSecret(value: string): string {
  return value.length >= 16 ? `${MASK}${value.slice(-4)}` : MASK;
}

export function webhookUrlOf(deps: Pick<Deps, 'config'>, row: Pick<SourceRow, 'channel' | 'token_hash'>): string {
  const base = `${deps.config.siteUrl}/api/v1/integrations/${row.channel}/webhook`;
  return row.channel === 'messaging_b' ? `${base}/${row.token_hash ?? ''}` : base;
}

export function secretsOf(deps: Pick<Deps, 'box'>, row: Pick<SourceRow, 'secrets_enc'>): Record<string, string> {
  if (!row.secrets_enc) return {};
  return JSON.parse(deps.box.decrypt(row.secrets_enc)) as Record<string, string>;
}

/** The source as its adapter needs it: plain config and decrypted secrets in one map. */
export function adapterSource(deps: Pick<Deps, 'box'>, row: SourceRow): AdapterSource {
  return { id: row.id, config: { ...row.config, ...secretsOf(deps, row) } };
}

export function sourceOut(deps: Pick<Deps, 'box' | 'config'>, row: SourceRow): ChannelSourceOut {
  const secrets = secretsOf(deps, row);
  const config: Record<string, string> = { ...row.config };
  for (const [key, value] of Object.entries(secrets)) config[key] = maskSecret(value);
  return {
    id: row.id, channel: row.channel, name: row.name, config, status: row.status, last_error: row.last_error,
    webhook_url: webhookUrlOf(deps, row), created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)!,
  };
}

/** Splits and checks a config against the channel's keys; answers the columns to store. */
async function configColumns(ctx: Ctx, channel: ChannelName, merged: Record<string, string>): Promise<Record<string, unknown>> {
  const adapter = ADAPTERS[channel];
  const problems: FieldProblem[] = [];
  const known = new Set([...adapter.keys.map((k) => k.name), BOT_FLOW_KEY]);
  for (const key of Object.keys(merged)) if (!known.has(key)) problems.push({ field: `config.${key}`, message: `is not a ${channel} key (${[...known].join(', ')})` });
  for (const key of adapter.keys) {
    const value = merged[key.name];
    if (key.required && !value?.trim()) problems.push({ field: `config.${key.name}`, message: 'is required' });
  }
  if (merged.api_base_url) {
    const problem = await urlProblem(merged.api_base_url, ctx.deps.config.webhooksAllowPrivate, 'config.api_base_url');
    if (problem) problems.push(problem);
  }
  const flowId = merged[BOT_FLOW_KEY]?.trim();
  if (flowId && !(UUID.test(flowId) && await scoped(ctx, 'bot_flows').where('id', flowId).first('id'))) {
    problems.push({ field: `config.${BOT_FLOW_KEY}`, message: 'is not a bot flow of this tenant' });
  }
  if (problems.length) throw errors.validation(problems);
  const plain: Record<string, string> = flowId ? { [BOT_FLOW_KEY]: flowId } : {};
  const secret: Record<string, string> = {};
  for (const key of adapter.keys) {
    const value = merged[key.name];
    if (value === undefined || value === '') continue;
    (key.secret ? secret : plain)[key.name] = key.name === 'api_base_url' ? value.replace(/\/+$/, '') : value;
  }
  return {
    config: JSON.stringify(plain),
    secrets_enc: Object.keys(secret).length ? ctx.deps.box.encrypt(JSON.stringify(secret)) : null,
    lookup_key: adapter.lookupConfigKey ? plain[adapter.lookupConfigKey] ?? secret[adapter.lookupConfigKey] ?? null : null,
    token_hash: channel === 'messaging_b' && secret.bot_token ? sha256Hex(secret.bot_token) : null,
    verify_token_hash: secret.verify_token ? sha256Hex(secret.verify_token) : null,
  };
}

export async function loadSource(ctx: Pick<Ctx, 'trx' | 'tenantId'>, id: string): Promise<SourceRow> {
  const row = await scoped(ctx, 'channel_sources').where('id', id).first() as SourceRow | undefined;
  if (!row) throw errors.notFound('channel source', id);
  return row;
}

export async function listSources(ctx: Ctx, query: ChannelSourceListQuery): Promise<Page<ChannelSourceOut>> {
  const qb = scoped(ctx, 'channel_sources').orderBy('created_at').orderBy('id');
  if (query.channel) qb.where('channel', query.channel);
  return paginatePage<SourceRow, ChannelSourceOut>(query, qb, (row) => sourceOut(ctx.deps, row));
}

export async function getSource(ctx: Ctx, id: string): Promise<ChannelSourceOut> {
  return sourceOut(ctx.deps, await loadSource(ctx, id));
}

export async function createSource(ctx: Ctx, input: ChannelSourceCreate): Promise<ChannelSourceOut> {
  const columns = await configColumns(ctx, input.channel, input.config);
  const [row] = await ctx.trx('channel_sources').insert({
    tenant_id: ctx.tenantId, id: uuidv7(ctx.now.getTime()), channel: input.channel, name: input.name.trim(), ...columns,
    status: 'active', last_error: null, created_at: ctx.now, updated_at: ctx.now,
  }).returning('*') as SourceRow[];
  await recordAudit(ctx, { action: 'channel_source.created', resourceType: 'channel_source', resourceId: row!.id, changes: { channel: input.channel, name: row!.name, config: row!.config } });
  return sourceOut(ctx.deps, row!);
}

export async function updateSource(ctx: Ctx, id: string, input: ChannelSourceUpdate): Promise<ChannelSourceOut> {
  const existing = await loadSource(ctx, id);
  if (existing.status === 'disconnected') throw errors.conflict(`Channel source ${id} is disconnected; connect a new one`);
  const update: Record<string, unknown> = { updated_at: ctx.now };
  if (input.name !== undefined) update.name = input.name.trim();
  if (input.config) {
    const merged: Record<string, string> = { ...existing.config, ...secretsOf(ctx.deps, existing) };
    for (const [key, value] of Object.entries(input.config)) {
      if (value.startsWith(MASK)) continue; // the masked value read back: keep the stored secret
      merged[key] = value;
    }
    Object.assign(update, await configColumns(ctx, existing.channel, merged), { status: 'active', last_error: null });
  }
  const [row] = await scoped(ctx, 'channel_sources').where('id', id).update(update).returning('*') as SourceRow[];
  await recordAudit(ctx, { action: 'channel_source.updated', resourceType: 'channel_source', resourceId: id, changes: { name: row!.name, config: row!.config, secrets_changed: !!input.config && Object.values(input.config).some((v) => !v.startsWith(MASK)) } });
  return sourceOut(ctx.deps, row!);
}

/** DELETE disconnects: the secrets are wiped, webhooks stop matching, tickets and identities stay. */
export async function disconnectSource(ctx: Ctx, id: string): Promise<void> {
  await loadSource(ctx, id);
  await scoped(ctx, 'channel_sources').where('id', id).update({
    status: 'disconnected', secrets_enc: null, lookup_key: null, token_hash: null, verify_token_hash: null, updated_at: ctx.now,
  });
  await scoped(ctx, 'channel_deliveries').where({ source_id: id }).whereNotNull('next_attempt_at')
    .update({ status: 'failed', next_attempt_at: null, error: 'the channel source was disconnected', updated_at: ctx.now });
  await recordAudit(ctx, { action: 'channel_source.disconnected', resourceType: 'channel_source', resourceId: id });
}

/** Marks a source in error (a vendor refused its credentials) or clears it; outside any request. */
export async function setSourceHealth(ctx: Pick<Ctx, 'trx' | 'tenantId' | 'now'>, id: string, error: string | null): Promise<void> {
  await scoped(ctx, 'channel_sources').where('id', id).whereNot('status', 'disconnected')
    .update({ status: error ? 'error' : 'active', last_error: error, updated_at: ctx.now });
}
