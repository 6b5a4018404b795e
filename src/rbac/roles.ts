import type { Ctx, Role as SystemRole } from '../core/context.js';
import { ROLES } from '../core/context.js';
import { errors } from '../core/errors.js';
import { isUuid } from '../core/ids.js';
import { toRfc3339 } from '../core/clock.js';
import { DEFAULT_PAGE_SIZE, type Page } from '../core/pagination.js';
import { isUniqueViolation, scoped } from '../db/tenant-scope.js';
import { pgErrorOf } from '../db/pg-errors.js';
import { recordAudit } from '../audit/service.js';
import { requireFeature } from '../licensing/features.js';
import { ROLE_SCOPES } from '../auth/scopes.js';
import { forgetCredentialsOnCommit } from '../auth/credential-changes.js';
import { checkPermissions, scopesOf, systemPermissions, type Permissions } from './permissions.js';
import { RoleRecord } from './models.js';
import type { PermissionMatrixIn, RoleCreateIn, RoleOut, RoleUpdateIn } from './schemas.js';

/**
 * Roles (CONTRACT §19): the three system roles, unchangeable, and a tenant's custom roles (RBAC
 * module). A custom role is a permission matrix; a user holding it is staff (`role = 'agent'`)
 * whose tokens carry exactly the matrix's scopes (src/auth/tokens.ts), checked by the same
 * pipeline as every other scope.
 */
const DESCRIPTIONS: Record<SystemRole, string> = {
  admin: 'Everything in the tenant',
  agent: 'Staff: works tickets and reads the directory',
  customer: 'Their own tickets and profile',
};

const isSystemName = (name: string) => (ROLES as readonly string[]).includes(name.trim().toLowerCase());

async function holders(ctx: Ctx): Promise<Map<string, number>> {
  const rows: { key: string; n: string }[] = await scoped(ctx, 'users')
    .select(ctx.trx.raw("coalesce(custom_role_id::text, role) as key"), ctx.trx.raw('count(*) as n'))
    .groupByRaw('1');
  return new Map(rows.map((r) => [r.key, Number(r.n)]));
}

function systemRoleOut(role: SystemRole, users: number): RoleOut {
  return {
    id: role, name: role, description: DESCRIPTIONS[role], system: true,
    permissions: systemPermissions(role), scopes: [...ROLE_SCOPES[role]], users, created_at: null, updated_at: null,
  };
}

function roleOut(row: RoleRecord, users: number): RoleOut {
  return {
    id: row.id, name: row.name, description: row.description, system: false,
    permissions: row.permissions, scopes: scopesOf(row.permissions), users,
    created_at: toRfc3339(row.created_at), updated_at: toRfc3339(row.updated_at),
  };
}

export async function listRoles(ctx: Ctx, query: { page?: number; page_size?: number }): Promise<Page<RoleOut>> {
  const page = query.page ?? 1;
  const pageSize = query.page_size ?? DEFAULT_PAGE_SIZE;
  const counts = await holders(ctx);
  const custom = await RoleRecord.scoped(ctx).orderByRaw('lower(name)');
  const all = [
    ...ROLES.map((r) => systemRoleOut(r, counts.get(r) ?? 0)),
    ...custom.map((r) => roleOut(r, counts.get(r.id) ?? 0)),
  ];
  return { data: all.slice((page - 1) * pageSize, page * pageSize), meta: { page, page_size: pageSize, total: all.length } };
}

export async function getRole(ctx: Ctx, id: string): Promise<RoleOut> {
  const counts = await holders(ctx);
  if ((ROLES as readonly string[]).includes(id)) return systemRoleOut(id as SystemRole, counts.get(id) ?? 0);
  const row = await loadCustom(ctx, id);
  return roleOut(row, counts.get(row.id) ?? 0);
}

/** A custom role of this tenant; a system role here is a conflict (they cannot change). */
async function loadCustom(ctx: Ctx, id: string, opts: { forUpdate?: boolean } = {}): Promise<RoleRecord> {
  if ((ROLES as readonly string[]).includes(id)) throw errors.conflict(`The system role ${id} cannot be changed`);
  const query = isUuid(id) ? RoleRecord.scoped(ctx).findOne({ 'roles.id': id }) : null;
  const row = query ? await (opts.forUpdate ? query.forUpdate() : query) : undefined;
  if (!row) throw errors.notFound('role', id);
  return row;
}

/** The custom role of this name (case-insensitive), or null. */
export async function findRoleByName(ctx: Pick<Ctx, 'trx' | 'tenantId'>, name: string): Promise<RoleRecord | null> {
  return (await RoleRecord.scoped(ctx).whereRaw('lower(name) = lower(?)', [name.trim()]).first()) ?? null;
}

function nameTaken(error: unknown, name: string): unknown {
  return isUniqueViolation(error, 'roles_tenant_name') ? errors.alreadyExists('role', 'name', name) : error;
}

export async function createRole(ctx: Ctx, input: RoleCreateIn): Promise<RoleOut> {
  await requireFeature(ctx, 'rbac');
  const name = input.name.trim();
  if (isSystemName(name)) throw errors.alreadyExists('role', 'name', name);
  let row: RoleRecord;
  try {
    row = await RoleRecord.insertIn(ctx, { name, description: input.description ?? '', permissions: {}, created_at: ctx.now, updated_at: ctx.now });
  } catch (error) {
    throw nameTaken(error, name);
  }
  await recordAudit(ctx, { action: 'role.created', resourceType: 'role', resourceId: row.id, changes: { name, description: row.description } });
  return roleOut(row, 0);
}

export async function updateRole(ctx: Ctx, id: string, input: RoleUpdateIn): Promise<RoleOut> {
  await requireFeature(ctx, 'rbac');
  const before = await loadCustom(ctx, id, { forUpdate: true });
  const patch: Record<string, unknown> = { updated_at: ctx.now };
  if (input.name !== undefined) {
    if (isSystemName(input.name)) throw errors.alreadyExists('role', 'name', input.name.trim());
    patch.name = input.name.trim();
  }
  if (input.description !== undefined) patch.description = input.description;
  let after: RoleRecord;
  try {
    after = await RoleRecord.scoped(ctx).findOne({ 'roles.id': before.id }).patch(patch).returning('*') as unknown as RoleRecord;
  } catch (error) {
    throw nameTaken(error, String(patch.name));
  }
  const changes: Record<string, unknown> = {};
  for (const f of ['name', 'description'] as const) if (before[f] !== after[f]) changes[f] = { from: before[f], to: after[f] };
  await recordAudit(ctx, { action: 'role.updated', resourceType: 'role', resourceId: before.id, changes });
  return roleOut(after, (await holders(ctx)).get(before.id) ?? 0);
}

export async function setRolePermissions(ctx: Ctx, id: string, input: PermissionMatrixIn): Promise<RoleOut> {
  await requireFeature(ctx, 'rbac');
  const before = await loadCustom(ctx, id, { forUpdate: true });
  const permissions: Permissions = checkPermissions(input);
  // The holders' tokens get the new scopes on this daemon's next request.
  forgetCredentialsOnCommit(ctx);
  const after = await RoleRecord.scoped(ctx).findOne({ 'roles.id': before.id })
    .patch({ permissions: permissions as never, updated_at: ctx.now }).returning('*') as unknown as RoleRecord;
  await recordAudit(ctx, {
    action: 'role.permissions_changed', resourceType: 'role', resourceId: before.id,
    changes: { permissions: { from: before.permissions, to: permissions }, scopes: { from: scopesOf(before.permissions), to: scopesOf(permissions) } },
  });
  return roleOut(after, (await holders(ctx)).get(before.id) ?? 0);
}

export async function deleteRole(ctx: Ctx, id: string): Promise<void> {
  await requireFeature(ctx, 'rbac');
  const row = await loadCustom(ctx, id, { forUpdate: true });
  const inUse = (await holders(ctx)).get(row.id) ?? 0;
  if (inUse > 0) throw errors.conflict(`Role ${row.name} is held by ${inUse} user${inUse === 1 ? '' : 's'}; give them another role first`, { users: inUse });
  try {
    await RoleRecord.scoped(ctx).findOne({ 'roles.id': row.id }).delete();
  } catch (error) {
    // A user given the role after the count above: the foreign key still refuses.
    if (pgErrorOf(error)?.code === '23503') throw errors.conflict(`Role ${row.name} is held by a user; give them another role first`);
    throw error;
  }
  await recordAudit(ctx, { action: 'role.deleted', resourceType: 'role', resourceId: row.id, changes: { name: row.name, permissions: row.permissions } });
}
