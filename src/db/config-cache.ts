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
 */

interface TenantEntry { version: string; values: Map<string, unknown> }

const MAX_TENANTS = 1000;
const tenants = new Map<string, TenantEntry>();
const pinned = new WeakMap<object, string>();

/** Reads the tenant's configuration version in ctx's transaction and lets `cachedConfig` use it. */
export async function pinConfigVersion(ctx: Ctx): Promise<void> {
  if (ctx.quiet || pinned.has(ctx)) return;
  const row = await prepared(ctx.trx('tenant_config_versions').where({ tenant_id: ctx.tenantId }).first('version')) as { version: string } | undefined;
  pinReadConfigVersion(ctx, row?.version);
}

/** The tenant's configuration version as a scalar subquery (its one binding: the tenant id). */
const CONFIG_VERSION_SUBQUERY = '(SELECT version FROM tenant_config_versions WHERE tenant_id = ?)';
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
  qb.select(ctx.trx.raw(`${CONFIG_VERSION_SUBQUERY} AS ${PINNED_VERSION}`, [ctx.tenantId]));
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
