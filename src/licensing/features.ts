import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { LicenseRecord } from './models.js';
import type { Edition } from './license.js';

/**
 * Editions and modules (SPEC "What the service does" 10, CONTRACT §8). A feature is gated either by
 * the Enterprise edition or by a named licence module. One table, one gate: `requireFeature()`.
 */
export const FEATURES = {
  api_keys: { edition: 'enterprise' },
  audit_log: { edition: 'enterprise' },
  webhook_endpoints: { edition: 'enterprise' },
  reporting: { edition: 'enterprise' },
  meetings: { module: 'meetings' },
  bi: { module: 'bi' },
  rbac: { module: 'rbac' },
  archiver: { module: 'archiver' },
} as const satisfies Record<string, { edition: 'enterprise' } | { module: string }>;

export type Feature = keyof typeof FEATURES;

export interface Entitlements {
  edition: Edition;
  modules: string[];
  seats: number | null;
  /** The licence in force, or null (Community). An expired licence is not in force. */
  license: LicenseRow | null;
}

/** An installed licence: the verified payload plus when it was installed. */
export type LicenseRow = LicenseRecord;

export async function latestLicense(ctx: Pick<Ctx, 'trx' | 'tenantId'>): Promise<LicenseRow | null> {
  const row = await LicenseRecord.scoped(ctx).orderBy('installed_at', 'desc').orderBy('id', 'desc').first();
  return row ?? null;
}

export const COMMUNITY: Omit<Entitlements, 'license'> = { edition: 'community', modules: [], seats: null };

/** What the tenant may use at `ctx.now`: the newest installed licence unless it has expired. */
export async function entitlements(ctx: Pick<Ctx, 'trx' | 'tenantId' | 'now'>): Promise<Entitlements> {
  const license = await latestLicense(ctx);
  if (!license || (license.expires_at && license.expires_at <= ctx.now)) return { ...COMMUNITY, license: null };
  return { edition: license.edition, modules: license.modules, seats: license.seats, license };
}

export function hasFeature(ent: Pick<Entitlements, 'edition' | 'modules'>, feature: Feature): boolean {
  const rule: { edition?: string; module?: string } = FEATURES[feature];
  if (rule.edition) return ent.edition === rule.edition;
  return ent.modules.includes(rule.module!);
}

export async function requireFeature(ctx: Pick<Ctx, 'trx' | 'tenantId' | 'now'>, feature: Feature): Promise<void> {
  if (!hasFeature(await entitlements(ctx), feature)) throw errors.featureNotLicensed(feature);
}
