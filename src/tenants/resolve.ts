import type { Knex } from 'knex';

export interface TenantRef {
  id: string;
  slug: string;
  name: string;
}

/**
 * Tenant resolution for requests without a bearer token (CONTRACT §3): the `X-Helpdesk-Tenant`
 * header (a slug), else the Host header (a custom domain, or `<slug>.<HELPDESK_BASE_DOMAIN>`).
 */
export async function tenantBySlug(db: Knex, slug: string): Promise<TenantRef | null> {
  if (!/^[a-z0-9-]{1,63}$/i.test(slug)) return null;
  const row = await db('tenants').where({ slug: slug.toLowerCase() }).first('id', 'slug', 'name');
  return row ?? null;
}

export async function tenantById(db: Knex, id: string): Promise<TenantRef | null> {
  const row = await db('tenants').where({ id }).first('id', 'slug', 'name');
  return row ?? null;
}

export async function tenantByHost(db: Knex, hostHeader: string, baseDomain: string | null): Promise<TenantRef | null> {
  const host = hostHeader.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  // Only a DNS name can be a tenant's domain; anything else (an IP, control characters) is none.
  if (!host || host.length > 253 || !/^[a-z0-9.-]+$/.test(host)) return null;
  const custom = await db('tenant_domains as d')
    .comment('cross-tenant: a custom domain decides the tenant')
    .join('tenants as t', 't.id', 'd.tenant_id')
    .where('d.domain', host)
    .first('t.id', 't.slug', 't.name');
  if (custom) return custom;
  if (baseDomain && host.endsWith(`.${baseDomain}`)) {
    const slug = host.slice(0, -(baseDomain.length + 1));
    if (!slug.includes('.')) return tenantBySlug(db, slug);
  }
  return null;
}
