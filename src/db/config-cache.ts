import type { Ctx } from '../core/context.js';
import { prepared } from './prepared.js';

/**
 * A per-process cache of the configuration a ticket write reads on every call (SLA calendar and
 * policies, webhook subscriptions, mail settings and templates), exact rather than "fresh enough".
 *
 * Every change to those tables bumps the tenant's row in `tenant_config_versions` in its own
 * transaction (triggers, migrations/20261127140000_config_versions.ts). A write path that changes
 * no configuration itself calls `pinConfigVersion(ctx)` first: one statement reads the version its
 * transaction sees. From then on `cachedConfig` answers from what an earlier transaction read under
 * that same version, or reads the rows and keeps them under it. A value filled under version V was
 * read after V was visible, so it is never older than V; a newer change means a new version, which
 * no pinned transaction can match with an older value. Paths that are not pinned (every
 * configuration change among them) read the database as before.
 *
 * Pinning also takes the tenant's configuration lock in share mode, before the version is read
 * (the database function `config_version_for_write`, migrations/20261202040000_custom_fields_config.ts).
 * A change whose effect a cached read must not miss takes it exclusively (`lockConfigForChange`):
 * it waits for the writes that pinned before it, and a write that pins while it runs waits and then
 * reads the version it committed. Deleting a custom field does, so that no write still validating
 * against the cached definition can leave a value for it behind.
 */

interface TenantEntry { version: string; values: Map<string, unknown> }

const MAX_TENANTS = 1000;
const tenants = new Map<string, TenantEntry>();
const pinned = new WeakMap<object, string>();

/** Reads the tenant's configuration version in ctx's transaction and lets `cachedConfig` use it. */
export async function pinConfigVersion(ctx: Ctx): Promise<void> {
  if (ctx.quiet || pinned.has(ctx)) return;
  const { rows } = await prepared(ctx.trx.raw<{ rows: Array<{ version: string | null }> }>(`SELECT ${CONFIG_VERSION_FOR_WRITE} AS version`, [ctx.tenantId]));
  pinReadConfigVersion(ctx, rows[0]?.version);
}

/**
 * Takes the tenant's configuration lock exclusively, until ctx's transaction ends: for a change
 * that must not race a write validating against the cached configuration (see above).
 */
export async function lockConfigForChange(ctx: Ctx): Promise<void> {
  await ctx.trx.raw('SELECT config_lock_for_change(?)', [ctx.tenantId]);
}

/** The tenant's configuration version, read after the configuration lock (its one binding: the tenant id). */
const CONFIG_VERSION_FOR_WRITE = 'config_version_for_write(?)';
const PINNED_VERSION = 'pinned_config_version__';

/** Pins the version a statement of ctx's transaction read. */
function pinReadConfigVersion(ctx: Ctx, version: string | number | null | undefined): void {
  if (ctx.quiet || pinned.has(ctx)) return;
  pinned.set(ctx, String(version ?? '0'));
}

/**
 * Adds the configuration version to the rows `qb` reads, for a write path whose first read is
 * one row it needs anyway (a reply's ticket, a create's requester) instead of a statement of its
 * own; `pinFromRow` then pins it.
 */
export function selectConfigVersion<Q extends { select(...columns: unknown[]): unknown }>(ctx: Ctx, qb: Q): Q {
  qb.select(ctx.trx.raw(`${CONFIG_VERSION_FOR_WRITE} AS ${PINNED_VERSION}`, [ctx.tenantId]));
  return qb;
}

/** Pins the version a row read through `selectConfigVersion` carries, and takes it off the row. */
export function pinFromRow(ctx: Ctx, row: object): void {
  const values = row as Record<string, unknown>;
  pinReadConfigVersion(ctx, values[PINNED_VERSION] as string | null);
  delete values[PINNED_VERSION];
}

/** Whether ctx's transaction has pinned its configuration version (so `cachedConfig` answers from the cache). */
export function configPinned(ctx: Ctx): boolean {
  return pinned.has(ctx);
}

/**
 * The value of `key` for ctx's tenant under the pinned version, loaded once per version and
 * process. Values are shared between requests: callers must not change them.
 */
export async function cachedConfig<T>(ctx: Ctx, key: string, load: () => Promise<T>): Promise<T> {
  const version = pinned.get(ctx);
  if (version === undefined) return load();
  let entry = tenants.get(ctx.tenantId);
  if (entry?.version === version && entry.values.has(key)) return entry.values.get(key) as T;
  const value = await load();
  entry = tenants.get(ctx.tenantId);
  if (!entry || BigInt(entry.version) < BigInt(version)) {
    entry = { version, values: new Map() };
    tenants.delete(ctx.tenantId);
    if (tenants.size >= MAX_TENANTS) tenants.delete(tenants.keys().next().value!);
    tenants.set(ctx.tenantId, entry);
  }
  if (entry.version === version) entry.values.set(key, deepFreeze(value));
  return value;
}

/** Shared values are frozen, so a caller that changed one would fail loudly instead of leaking. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value) && !(value instanceof Date)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
