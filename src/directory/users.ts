import { ROLES, type Actor, type Ctx, type Role } from '../core/context.js';
import { entitlements, hasFeature, requireFeature } from '../licensing/features.js';
import { grants } from '../auth/scopes.js';
import { findRoleByName } from '../rbac/roles.js';
import { scopesOf } from '../rbac/permissions.js';
import { RoleRecord } from '../rbac/models.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { paginatePage, type Page } from '../core/pagination.js';
import { UserRecord } from './models.js';
import { revokeUserSessions } from '../auth/sessions.js';
import { forgetCredentialsOnCommit } from '../auth/credential-changes.js';
import { diff, recordAudit } from '../audit/service.js';
import { assertEmailsFree, emailConflict, findUser, insertUser, normaliseEmail, type UserRow } from './user-store.js';
import { recordCustomerEvent } from './customer-events.js';
import { assertOrganizationExists } from './organization-lookup.js';
import { assertSeatAvailable, lockTenant } from './seats.js';
import { profileProblems, type ProfileFields } from './profile-rules.js';
import type { User, UserCreate, UserListQuery, UserUpdate } from './user-schemas.js';

/**
 * Staff roster and customer directory: list, create, read, update, role changes. Seats bound the
 * number of active agents and admins (seats.ts); a tenant always keeps one active admin.
 */
export function userOut(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    custom_role_id: row.custom_role_id ?? null,
    active: row.active,
    phone: row.phone,
    notes: row.notes,
    department: row.department,
    alternate_emails: row.alternate_emails ?? [],
    custom_fields: row.custom_fields ?? {},
    is_vip: row.is_vip,
    max_concurrent_conversations: row.max_concurrent_conversations,
    organization_id: row.organization_id,
    avatar_url: row.avatar_url,
    timezone: row.timezone,
    locale: row.locale,
    two_factor_enabled: row.two_factor_enabled,
    invited_at: toRfc3339(row.invited_at),
    last_login_at: toRfc3339(row.last_login_at),
    created_at: toRfc3339(row.created_at)!,
    updated_at: toRfc3339(row.updated_at)!,
  };
}

const isStaff = (role: Role) => role === 'admin' || role === 'agent';

/** Admins, and operators at the CLI, may hand out the admin role; an API key acts as its owner. */
function actsAsAdmin(actor: Actor): boolean {
  return actor.role === 'admin' || actor.type === 'cli' || actor.type === 'system';
}

function requireAdminActor(ctx: Ctx): void {
  if (!actsAsAdmin(ctx.actor)) throw errors.forbidden('Only admins may grant or take away the admin role');
}

/** Checks the schema cannot express; all problems at once. */
function checkProfile(input: ProfileFields): void {
  const problems = profileProblems(input);
  if (problems.length) throw errors.validation(problems);
}

/** Column values of the profile fields present in the input (absent = unchanged). */
function profileColumns(input: Partial<UserCreate & UserUpdate>): Record<string, unknown> {
  const columns: Record<string, unknown> = {};
  const copy = ['phone', 'notes', 'department', 'is_vip', 'max_concurrent_conversations', 'organization_id', 'avatar_url', 'timezone', 'locale', 'active'] as const;
  for (const field of copy) if (input[field] !== undefined) columns[field] = input[field];
  if (input.name !== undefined) columns.name = input.name.trim();
  if (input.email !== undefined) columns.email = normaliseEmail(input.email);
  if (input.alternate_emails !== undefined) columns.alternate_emails = [...new Set(input.alternate_emails.map(normaliseEmail))];
  if (input.custom_fields !== undefined) columns.custom_fields = input.custom_fields;
  return columns;
}

const AUDITED_FIELDS = ['email', 'name', 'phone', 'notes', 'department', 'alternate_emails', 'custom_fields', 'is_vip',
  'max_concurrent_conversations', 'organization_id', 'avatar_url', 'timezone', 'locale', 'active'];

/** Fields whose change is a `customer.updated` event (the spec's event table). */
const CUSTOMER_EVENT_FIELDS = ['email', 'name', 'phone', 'notes', 'department', 'alternate_emails', 'custom_fields', 'is_vip',
  'organization_id', 'avatar_url', 'timezone', 'locale'];

export async function listUsers(ctx: Ctx, query: UserListQuery): Promise<Page<User>> {
  const qb = UserRecord.scoped(ctx);
  if (query.role) qb.where('role', query.role);
  if (query.active !== undefined) qb.where('active', query.active);
  if (query.is_vip !== undefined) qb.where('is_vip', query.is_vip);
  if (query.organization_id) qb.where('organization_id', query.organization_id);
  if (query.q) {
    const pattern = `%${query.q.trim().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    // Name, primary email or any alternate email (the customer directory's search).
    qb.where((w) => w.where('name', 'ilike', pattern).orWhere('email', 'ilike', pattern)
      .orWhereRaw("array_to_string(users.alternate_emails, ' ') ilike ?", [pattern]));
  }
  qb.orderBy(query.sort_by ?? 'created_at', query.sort_dir ?? 'asc').orderBy('id', query.sort_dir ?? 'asc');
  return paginatePage<UserRow, User>(query, qb, userOut);
}

export async function loadUser(ctx: Ctx, id: string): Promise<UserRow> {
  const row = await findUser(ctx, id);
  if (!row) throw errors.notFound('user', id);
  return row;
}

export async function getUser(ctx: Ctx, id: string): Promise<User> {
  return userOut(await loadUser(ctx, id));
}

/** An address listed as alternate that is the primary one is the same address: not kept twice. */
function withoutPrimary(columns: Record<string, unknown>, primary: string): void {
  if (Array.isArray(columns.alternate_emails)) columns.alternate_emails = (columns.alternate_emails as string[]).filter((e) => e !== normaliseEmail(primary));
}

export async function createUser(ctx: Ctx, input: UserCreate): Promise<User> {
  checkProfile(input);
  const role = input.role ?? 'customer';
  if (role === 'admin') requireAdminActor(ctx);
  await assertOrganizationExists(ctx, input.organization_id);
  if (isStaff(role)) await assertSeatAvailable(ctx);
  const columns = profileColumns(input);
  withoutPrimary(columns, input.email);
  const row = await insertUser(ctx, { ...columns, email: input.email, name: input.name, role, password: input.password ?? null });
  await recordAudit(ctx, { action: 'user.created', resourceType: 'user', resourceId: row.id, changes: { email: row.email, name: row.name, role } });
  // Staff intake of a customer (signup records its own in registration.ts).
  if (role === 'customer') await recordCustomerEvent(ctx, 'customer.created', row);
  return userOut(row);
}

/** Refuses when `user` is the last active admin (called with the tenant row locked). */
async function assertAnotherActiveAdmin(ctx: Ctx, user: UserRow, action: string): Promise<void> {
  const other = await UserRecord.scoped(ctx).where({ role: 'admin', active: true }).whereNot('id', user.id).select('id').first();
  if (!other) throw errors.conflict(`Cannot ${action} the last active admin`, { reason: 'last_active_admin' });
}

async function saveUser(ctx: Ctx, id: string, columns: Record<string, unknown>): Promise<UserRow> {
  // A role, a deactivation or a name reaches the user's tokens on this daemon's next request.
  forgetCredentialsOnCommit(ctx);
  try {
    const [row] = await UserRecord.scoped(ctx).where('id', id).patch({ ...columns, updated_at: ctx.now }).returning('*');
    return row!;
  } catch (error) {
    throw emailConflict(error, String(columns.email ?? 'one of the addresses'));
  }
}

export async function updateUser(ctx: Ctx, id: string, input: UserUpdate): Promise<User> {
  const before = await loadUser(ctx, id);
  checkProfile(input);
  await assertOrganizationExists(ctx, input.organization_id);
  const columns = profileColumns(input);
  withoutPrimary(columns, (columns.email as string | undefined) ?? before.email);
  await assertEmailsFree(ctx, { email: columns.email as string | undefined, alternate_emails: columns.alternate_emails as string[] | undefined }, id);
  const deactivating = input.active === false && before.active;
  const reactivating = input.active === true && !before.active;
  if (deactivating) {
    if (ctx.actor.userId === id) throw errors.conflict('You cannot deactivate yourself');
    if (before.role === 'admin') {
      await lockTenant(ctx);
      await assertAnotherActiveAdmin(ctx, before, 'deactivate');
    }
  }
  if (reactivating && isStaff(before.role)) await assertSeatAvailable(ctx);

  const changes = diff(before as unknown as Record<string, unknown>, { ...before, ...columns }, AUDITED_FIELDS);
  if (!Object.keys(changes).length) return userOut(before);
  const after = await saveUser(ctx, id, columns);
  // A deactivated user is signed out everywhere; their API keys stop resolving with them.
  if (deactivating) await revokeUserSessions(ctx, id);
  await recordAudit(ctx, { action: 'user.updated', resourceType: 'user', resourceId: id, changes });
  if (after.role === 'customer' && CUSTOMER_EVENT_FIELDS.some((f) => f in changes)) await recordCustomerEvent(ctx, 'customer.updated', after);
  return userOut(after);
}

/** PATCH /users/{id}/organization: links a user to an organization of the tenant, or unlinks (null). */
export async function setUserOrganization(ctx: Ctx, id: string, organizationId: string | null): Promise<User> {
  const before = await loadUser(ctx, id);
  await assertOrganizationExists(ctx, organizationId);
  if (before.organization_id === organizationId) return userOut(before);
  const after = await saveUser(ctx, id, { organization_id: organizationId });
  await recordAudit(ctx, { action: 'user.updated', resourceType: 'user', resourceId: id, changes: { organization_id: { from: before.organization_id, to: organizationId } } });
  if (after.role === 'customer') await recordCustomerEvent(ctx, 'customer.updated', after);
  return userOut(after);
}

/**
 * `PATCH /users/{id}/role`: a system role, or a custom role's name (RBAC module, CONTRACT §19).
 * A custom role's holder is staff (`role = 'agent'`, a seat) with exactly the role's scopes. Only
 * admins hand out or take away `admin`; anyone else may hand out only a custom role whose scopes
 * they hold themselves, so `users:write` never becomes a way to more rights.
 */
export async function changeRole(ctx: Ctx, id: string, name: string): Promise<User> {
  const wanted = name.trim();
  const system = (ROLES as readonly string[]).includes(wanted.toLowerCase()) ? (wanted.toLowerCase() as Role) : null;
  let custom: RoleRecord | null = null;
  if (!system) {
    custom = await findRoleByName(ctx, wanted);
    if (!custom) {
      const rbac = hasFeature(await entitlements(ctx), 'rbac');
      throw errors.invalid('role', rbac ? `must be admin, agent, customer or the name of a custom role; there is no role ${wanted}` : 'must be one of admin, agent, customer');
    }
    await requireFeature(ctx, 'rbac');
    const missing = scopesOf(custom.permissions).filter((s) => !grants(ctx.actor.scopes, s));
    if (missing.length && !actsAsAdmin(ctx.actor)) throw errors.forbidden(`Only admins may hand out a role granting scopes you do not hold (${missing.join(', ')})`);
  }
  const role: Role = system ?? 'agent';
  const customRoleId = custom?.id ?? null;
  const before = await loadUser(ctx, id);
  if (before.role === role && (before.custom_role_id ?? null) === customRoleId) return userOut(before);
  if (role === 'admin' || before.role === 'admin') requireAdminActor(ctx);
  if (before.role === 'admin' && before.active) {
    await lockTenant(ctx);
    await assertAnotherActiveAdmin(ctx, before, 'demote');
  }
  if (!isStaff(before.role) && isStaff(role) && before.active) await assertSeatAvailable(ctx);
  const after = await saveUser(ctx, id, { role, custom_role_id: customRoleId });
  const fromName = before.custom_role_id ? (await RoleRecord.findIn(ctx, before.custom_role_id))?.name ?? before.role : before.role;
  await recordAudit(ctx, {
    action: 'user.role_changed', resourceType: 'user', resourceId: id,
    changes: { from: fromName, to: custom?.name ?? role, ...(custom || before.custom_role_id ? { custom_role_id: { from: before.custom_role_id ?? null, to: customRoleId } } : {}) },
  });
  return userOut(after);
}
