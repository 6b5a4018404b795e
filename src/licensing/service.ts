import { Type, type Static } from '@sinclair/typebox';
import type { Ctx } from '../core/context.js';
import { toRfc3339 } from '../core/clock.js';
import { Nullable, StringEnum } from '../core/schema-types.js';
import { LicenseRecord } from './models.js';
import { recordAudit } from '../audit/service.js';
import { COMMUNITY, FEATURES, hasFeature, latestLicense, type Feature, type LicenseRow } from './features.js';
import { licensePublicKey, verifyLicense } from './license.js';

/**
 * Installing and reporting a tenant's licence. POST /license and `helpdesk license apply FILE`
 * both call `applyLicense`; the newest installed licence is the one in force until it expires,
 * after which the tenant falls back to Community (its data stays, gated routes answer 403).
 */
export const LicenseStatus = Type.Object({
  edition: StringEnum(['community', 'enterprise']),
  status: StringEnum(['none', 'active', 'expired']),
  license_id: Nullable(Type.String()),
  customer: Nullable(Type.String()),
  modules: Type.Array(Type.String()),
  seats: Nullable(Type.Integer()),
  issued_at: Nullable(Type.String()),
  expires_at: Nullable(Type.String()),
  installed_at: Nullable(Type.String()),
  features: Type.Object(Object.fromEntries(Object.keys(FEATURES).map((f) => [f, Type.Boolean()])) as Record<Feature, ReturnType<typeof Type.Boolean>>),
}, { $id: 'LicenseStatus' });
export type LicenseStatus = Static<typeof LicenseStatus>;

function statusOf(row: LicenseRow | null, now: Date): LicenseStatus {
  const expired = Boolean(row?.expires_at && row.expires_at <= now);
  const inForce = row && !expired ? { edition: row.edition, modules: row.modules } : COMMUNITY;
  const features = Object.fromEntries((Object.keys(FEATURES) as Feature[]).map((f) => [f, hasFeature(inForce, f)])) as Record<Feature, boolean>;
  return {
    edition: inForce.edition,
    status: !row ? 'none' : expired ? 'expired' : 'active',
    license_id: row?.license_id ?? null,
    customer: row?.customer ?? null,
    // What the licence grants (an expired one still shows what it granted, for renewal).
    modules: row?.modules ?? [],
    seats: row?.seats ?? null,
    issued_at: toRfc3339(row?.issued_at),
    expires_at: toRfc3339(row?.expires_at),
    installed_at: toRfc3339(row?.installed_at),
    features,
  };
}

export async function licenseStatus(ctx: Ctx): Promise<LicenseStatus> {
  return statusOf(await latestLicense(ctx), ctx.now);
}

/** Verifies a licence against the configured key and installs it as the tenant's current one. */
export async function applyLicense(ctx: Ctx, text: string): Promise<LicenseStatus> {
  const payload = verifyLicense(text, licensePublicKey(ctx.deps.config.licensePublicKey), ctx.now);
  const row = await LicenseRecord.insertIn(ctx, {
    license_id: payload.license_id,
    customer: payload.customer,
    edition: payload.edition,
    modules: payload.modules,
    seats: payload.seats,
    issued_at: payload.issued_at,
    expires_at: payload.expires_at,
    raw: text.trim(),
    installed_by: ctx.actor.userId,
    installed_at: ctx.now,
  });
  await recordAudit(ctx, {
    action: 'license.applied',
    resourceType: 'license',
    resourceId: row.id,
    changes: {
      license_id: payload.license_id,
      customer: payload.customer,
      edition: payload.edition,
      modules: payload.modules,
      seats: payload.seats,
      expires_at: toRfc3339(payload.expires_at),
    },
  });
  return statusOf(row, ctx.now);
}
