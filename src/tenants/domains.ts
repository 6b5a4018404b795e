import { isIP } from 'node:net';
import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { isUniqueViolation } from '../db/tenant-scope.js';
import { recordAudit } from '../audit/service.js';

/**
 * Custom domains (CONTRACT §19, §3): an operator binds a DNS name to a tenant; a request without a
 * token whose `Host` is that name resolves to the tenant (resolve.ts). A name belongs to one tenant.
 */
export interface DomainOut {
  domain: string;
  tenant_id: string;
  created_at: string;
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Lowercased, without a trailing dot; a DNS name of at least two labels, never an IP address. */
export function normaliseDomain(input: string): string {
  const domain = input.trim().toLowerCase().replace(/\.$/, '');
  const labels = domain.split('.');
  if (!domain || domain.length > 253 || isIP(domain) || labels.length < 2 || !labels.every((l) => LABEL.test(l)) || /^\d+$/.test(labels.at(-1)!)) {
    throw errors.invalid('domain', 'must be a DNS name such as help.example.com');
  }
  return domain;
}

function out(row: { domain: string; tenant_id: string; created_at: Date }): DomainOut {
  return { domain: row.domain, tenant_id: row.tenant_id, created_at: toRfc3339(row.created_at)! };
}

export async function listDomains(ctx: Ctx): Promise<DomainOut[]> {
  const rows = await ctx.trx('tenant_domains').where({ tenant_id: ctx.tenantId }).orderBy('domain');
  return rows.map(out);
}

export async function addDomain(ctx: Ctx, input: string): Promise<DomainOut> {
  const domain = normaliseDomain(input);
  const taken = await ctx.trx('tenant_domains').comment('cross-tenant: a domain belongs to one tenant').where({ domain }).first('tenant_id');
  if (taken) throw errors.alreadyExists('domain', 'domain', domain);
  let row;
  try {
    [row] = await ctx.trx('tenant_domains').insert({ domain, tenant_id: ctx.tenantId, created_at: ctx.now }).returning('*');
  } catch (error) {
    if (isUniqueViolation(error)) throw errors.alreadyExists('domain', 'domain', domain);
    throw error;
  }
  await recordAudit(ctx, { action: 'tenant.domain_added', resourceType: 'tenant', resourceId: ctx.tenantId, changes: { domain } });
  return out(row);
}

export async function removeDomain(ctx: Ctx, input: string): Promise<{ removed: string }> {
  const domain = normaliseDomain(input);
  const n = await ctx.trx('tenant_domains').where({ tenant_id: ctx.tenantId, domain }).delete();
  if (!n) throw errors.notFound('domain', domain);
  await recordAudit(ctx, { action: 'tenant.domain_removed', resourceType: 'tenant', resourceId: ctx.tenantId, changes: { domain } });
  return { removed: domain };
}
