import type { Knex } from 'knex';
import sanitizeHtml from 'sanitize-html';
import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { scoped } from '../db/tenant-scope.js';
import { recordAudit, diff } from '../audit/service.js';
import type { BrandingOut, BrandingPatchIn } from './schemas.js';

/**
 * Help-center branding (CONTRACT §19): colours, logo, names and a footer that the CSAT page, web
 * forms and notification mail show. One row per tenant; fields left null take the defaults.
 * `brandingFor(db, tenantId)` is the read for other areas (web forms, portals).
 */
export const DEFAULT_PRIMARY = '#0b57d0';
export const DEFAULT_ACCENT = '#f5a623';
const FIELDS = ['name', 'logo_url', 'primary_color', 'accent_color', 'help_center_title', 'support_email', 'footer_html'] as const;

interface BrandingRow {
  name: string | null;
  logo_url: string | null;
  primary_color: string | null;
  accent_color: string | null;
  help_center_title: string | null;
  support_email: string | null;
  footer_html: string | null;
  updated_at: Date | null;
}

/** The footer allows basic formatting and links (https, mailto); no scripts, styles, images or handlers. */
const FOOTER: sanitizeHtml.IOptions = {
  allowedTags: ['a', 'p', 'br', 'strong', 'em', 'b', 'i', 'u', 'small', 'span', 'ul', 'ol', 'li'],
  allowedAttributes: { a: ['href', 'title', 'target', 'rel'] },
  allowedSchemes: ['https', 'mailto'],
  allowProtocolRelative: false,
  transformTags: { a: sanitizeHtml.simpleTransform('a', { target: '_blank', rel: 'noopener noreferrer' }) },
};

export function sanitizeFooter(html: string): string {
  return sanitizeHtml(html, FOOTER).trim();
}

/** `#ABC` → `#aabbcc`. */
function normaliseColor(value: string): string {
  const hex = value.slice(1).toLowerCase();
  return `#${hex.length === 3 ? hex.split('').map((c) => c + c).join('') : hex}`;
}

function out(tenantName: string, row: BrandingRow | undefined): BrandingOut {
  const name = row?.name?.trim() || tenantName;
  return {
    name,
    logo_url: row?.logo_url ?? null,
    primary_color: row?.primary_color ?? DEFAULT_PRIMARY,
    accent_color: row?.accent_color ?? DEFAULT_ACCENT,
    help_center_title: row?.help_center_title?.trim() || `${name} Help Center`,
    support_email: row?.support_email ?? null,
    footer_html: row?.footer_html ?? '',
    updated_at: toRfc3339(row?.updated_at ?? null),
  };
}

/**
 * A tenant's branding, for any area that renders for people (web forms, portals): a plain read by
 * tenant id, usable with a transaction or the pool.
 */
export async function brandingFor(db: Knex | Knex.Transaction, tenantId: string): Promise<BrandingOut> {
  const tenant = await db('tenants').where({ id: tenantId }).first('name') as { name: string } | undefined;
  if (!tenant) throw errors.tenantNotFound();
  const row = await scoped({ trx: db, tenantId }, 'tenant_branding').first() as BrandingRow | undefined;
  return out(tenant.name, row);
}

/** Whether the tenant has set any branding (mail stays as it was until they do). */
export async function hasBranding(ctx: Pick<Ctx, 'trx' | 'tenantId'>): Promise<boolean> {
  return Boolean(await scoped(ctx, 'tenant_branding').first('tenant_id'));
}

export function getBranding(ctx: Ctx): Promise<BrandingOut> {
  return brandingFor(ctx.trx, ctx.tenantId);
}

export async function updateBranding(ctx: Ctx, input: BrandingPatchIn): Promise<BrandingOut> {
  const before = await scoped(ctx, 'tenant_branding').forUpdate().first() as BrandingRow | undefined;
  const patch: Record<string, string | null> = {};
  for (const field of FIELDS) {
    if (!(field in input)) continue;
    const value = input[field];
    if (value === null || value === undefined || !value.trim()) { patch[field] = null; continue; }
    if (field === 'primary_color' || field === 'accent_color') patch[field] = normaliseColor(value);
    else if (field === 'footer_html') patch[field] = sanitizeFooter(value) || null;
    else if (field === 'logo_url') {
      let url: URL;
      try { url = new URL(value); } catch { throw errors.invalid('logo_url', 'must be an https URL'); }
      if (url.protocol !== 'https:' || url.username || url.password) throw errors.invalid('logo_url', 'must be an https URL without credentials');
      patch[field] = url.toString();
    } else patch[field] = value.trim();
  }
  if (before) await scoped(ctx, 'tenant_branding').update({ ...patch, updated_at: ctx.now });
  else await ctx.trx('tenant_branding').insert({ ...patch, tenant_id: ctx.tenantId, created_at: ctx.now, updated_at: ctx.now });
  const after = await getBranding(ctx);
  const changes = diff((before ?? {}) as unknown as Record<string, unknown>, { ...(before ?? {}), ...patch }, [...FIELDS]);
  await recordAudit(ctx, { action: 'branding.updated', resourceType: 'branding', resourceId: null, changes });
  return after;
}
