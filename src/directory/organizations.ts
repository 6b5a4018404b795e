import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { paginatePage, type Page } from '../core/pagination.js';
import { isUniqueViolation } from '../db/tenant-scope.js';
import { emitOrganizationEvent, type OrganizationSnapshot } from '../events/emit/organization.js';
import { diff, recordAudit } from '../audit/service.js';
import { OrganizationRecord, UserRecord } from './models.js';
import { recordCustomerEvent } from './customer-events.js';
import { userOut } from './users.js';
import type { User } from './user-schemas.js';
import type { FilterValuesQuery, Organization, OrganizationCreate, OrganizationListQuery, OrganizationUpdate } from './schemas.js';

/**
 * Customer organizations (SPEC "Other records"): a name unique per tenant, email domains unique per
 * tenant (a new customer whose address is at one of them joins the organization, see
 * user-store.ts), and `shares_tickets`, which lets members see each other's tickets.
 */
export function organizationOut(row: OrganizationRecord): Organization {
  return {
    id: row.id,
    name: row.name,
    domains: row.domains ?? [],
    website: row.website,
    notes: row.notes,
    custom_fields: row.custom_fields ?? {},
    shares_tickets: row.shares_tickets,
    created_at: toRfc3339(row.created_at)!,
    updated_at: toRfc3339(row.updated_at)!,
  };
}

/** The `organization.created` / `organization.updated` payload of the spec's event table. */
function organizationSnapshot(row: OrganizationRecord): OrganizationSnapshot {
  const out = organizationOut(row);
  return {
    id: out.id,
    name: out.name,
    primary_domain: out.domains[0] ?? null,
    domains: out.domains,
    website: out.website,
    notes: out.notes,
    custom_fields: out.custom_fields,
    shares_tickets: out.shares_tickets,
  };
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

export async function loadOrganization(ctx: Ctx, id: string): Promise<OrganizationRecord> {
  const row = await OrganizationRecord.findIn(ctx, id);
  if (!row) throw errors.notFound('organization', id);
  return row;
}

/** Domains lower-cased and de-duplicated, in the order given (the first is the primary one). */
function normaliseDomains(domains: string[]): string[] {
  return [...new Set(domains.map((d) => d.trim().toLowerCase()))];
}

/** Every domain another organization of the tenant already holds, named by its index. */
async function domainProblems(ctx: Ctx, domains: string[], exceptId: string | null): Promise<FieldProblem[]> {
  if (!domains.length) return [];
  const query = OrganizationRecord.scoped(ctx).whereRaw('organizations.domains && ?::text[]', [domains]).select('id', 'name', 'domains');
  if (exceptId) query.whereNot('organizations.id', exceptId);
  const taken = new Map<string, string>();
  for (const org of await query) for (const d of org.domains) taken.set(d, org.name);
  return domains.flatMap((d, i) => (taken.has(d) ? [{ field: `domains.${i}`, message: `is already a domain of the organization ${taken.get(d)}` }] : []));
}

async function save<T>(ctx: Ctx, name: string | undefined, write: () => PromiseLike<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, 'organizations_name')) throw errors.alreadyExists('organization', 'name', name ?? '');
    // A concurrent write took a domain between the check and this write.
    if (isUniqueViolation(error, 'organization_domains_pkey')) throw errors.alreadyExists('organization', 'domain', 'in the list');
    throw error;
  }
}

export async function listOrganizations(ctx: Ctx, query: OrganizationListQuery): Promise<Page<Organization>> {
  const qb = OrganizationRecord.scoped(ctx);
  if (query.q) {
    const q = query.q.trim().toLowerCase();
    qb.where((w) => w.where('organizations.name', 'ilike', `%${escapeLike(q)}%`).orWhereRaw('? = ANY(organizations.domains)', [q]));
  }
  qb.orderByRaw('lower(organizations.name)').orderBy('organizations.id');
  return paginatePage<OrganizationRecord, Organization>(query, qb, organizationOut);
}

/** Autocomplete for filters: names whose words start with `q`, alphabetical. */
export async function organizationFilterValues(ctx: Ctx, query: FilterValuesQuery): Promise<{ data: Array<{ id: string; name: string }> }> {
  const qb = OrganizationRecord.scoped(ctx).select('id', 'name');
  if (query.q?.trim()) {
    const prefix = escapeLike(query.q.trim());
    qb.where((w) => w.where('organizations.name', 'ilike', `${prefix}%`).orWhere('organizations.name', 'ilike', `% ${prefix}%`));
  }
  const rows = await qb.orderByRaw('lower(organizations.name)').orderBy('organizations.id').limit(query.limit ?? 20);
  return { data: rows.map((r) => ({ id: r.id, name: r.name })) };
}

export async function getOrganization(ctx: Ctx, id: string): Promise<Organization> {
  return organizationOut(await loadOrganization(ctx, id));
}

export async function createOrganization(ctx: Ctx, input: OrganizationCreate): Promise<Organization> {
  const domains = normaliseDomains(input.domains ?? []);
  const problems = await domainProblems(ctx, domains, null);
  if (problems.length) throw errors.validation(problems);
  const name = input.name.trim();
  const row = await save(ctx, name, () => OrganizationRecord.insertIn(ctx, {
    name,
    domains,
    website: input.website ?? null,
    notes: input.notes ?? null,
    custom_fields: input.custom_fields ?? {},
    shares_tickets: input.shares_tickets ?? false,
    created_at: ctx.now,
    updated_at: ctx.now,
  }));
  await emitOrganizationEvent(ctx, 'organization.created', organizationSnapshot(row));
  await recordAudit(ctx, { action: 'organization.created', resourceType: 'organization', resourceId: row.id, changes: { name, domains } });
  return organizationOut(row);
}

const AUDITED = ['name', 'domains', 'website', 'notes', 'custom_fields', 'shares_tickets'];

export async function updateOrganization(ctx: Ctx, id: string, input: OrganizationUpdate): Promise<Organization> {
  const before = await loadOrganization(ctx, id);
  const columns: Record<string, unknown> = {};
  if (input.name !== undefined) columns.name = input.name.trim();
  if (input.domains !== undefined) columns.domains = normaliseDomains(input.domains);
  for (const field of ['website', 'notes', 'custom_fields', 'shares_tickets'] as const) if (input[field] !== undefined) columns[field] = input[field];
  const problems = await domainProblems(ctx, (columns.domains as string[] | undefined) ?? [], id);
  if (problems.length) throw errors.validation(problems);

  const changes = diff(before as unknown as Record<string, unknown>, { ...before, ...columns }, AUDITED);
  if (!Object.keys(changes).length) return organizationOut(before);
  const [after] = await save(ctx, columns.name as string | undefined, () =>
    OrganizationRecord.scoped(ctx).where('organizations.id', id).patch({ ...columns, updated_at: ctx.now } as Partial<OrganizationRecord>).returning('*'));
  await emitOrganizationEvent(ctx, 'organization.updated', organizationSnapshot(after!));
  await recordAudit(ctx, { action: 'organization.updated', resourceType: 'organization', resourceId: id, changes });
  return organizationOut(after!);
}

/** Deletes an organization; its members stay, unlinked (each customer's change is an event). */
export async function deleteOrganization(ctx: Ctx, id: string): Promise<void> {
  const org = await loadOrganization(ctx, id);
  const members = await UserRecord.scoped(ctx).where('users.organization_id', id).forUpdate();
  if (members.length) await UserRecord.scoped(ctx).where('users.organization_id', id).patch({ organization_id: null, updated_at: ctx.now });
  await OrganizationRecord.scoped(ctx).where('organizations.id', id).delete();
  for (const member of members) {
    if (member.role === 'customer') await recordCustomerEvent(ctx, 'customer.updated', Object.assign(member, { organization_id: null }));
  }
  await recordAudit(ctx, { action: 'organization.deleted', resourceType: 'organization', resourceId: id, changes: { name: org.name, members: members.length } });
}

export async function listOrganizationMembers(ctx: Ctx, id: string, query: { page?: number; page_size?: number }): Promise<Page<User>> {
  await loadOrganization(ctx, id);
  const qb = UserRecord.scoped(ctx).where('users.organization_id', id).orderByRaw('lower(users.name)').orderBy('users.id');
  return paginatePage<UserRecord, User>(query, qb, userOut);
}
