import type { Ctx, Role } from '../core/context.js';
import { AppError, errors } from '../core/errors.js';
import { isUniqueViolation, scoped } from '../db/tenant-scope.js';
import { pinFromRow, selectConfigVersion } from '../db/config-cache.js';
import { prepared } from '../db/prepared.js';
import { selectModels } from '../db/model.js';
import { UserRecord } from './models.js';
import { organizationForEmail } from './organization-lookup.js';
import { assertPasswordPolicy, hashPassword } from '../auth/passwords.js';

/**
 * The users table's storage rules, shared by every path that creates or reads a user (tenant
 * bootstrap, staff intake, customer registration): normalised email, hashed password, uniqueness.
 * A stored user is the directory's model, `UserRecord`. Every address, primary or alternate, names
 * one user of a tenant (the user_emails table, kept by a trigger); a new customer whose email
 * domain is an organization's domain joins that organization.
 */
export type UserRow = UserRecord;

export interface NewUser {
  email: string;
  name: string;
  role: Role;
  password?: string | null;
  [column: string]: unknown;
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Refuses addresses another user of the tenant already holds as primary or alternate email:
 * `409 already_exists` naming each taken field (`email`, `alternate_emails.1`).
 */
export async function assertEmailsFree(ctx: Ctx, input: { email?: string; alternate_emails?: string[] }, exceptUserId: string | null): Promise<void> {
  const wanted = [
    ...(input.email !== undefined ? [{ field: 'email', email: normaliseEmail(input.email) }] : []),
    ...(input.alternate_emails ?? []).map((e, i) => ({ field: `alternate_emails.${i}`, email: normaliseEmail(e) })),
  ];
  if (!wanted.length) return;
  const query = scoped<{ email: string }>(ctx, 'user_emails').whereIn('email', wanted.map((w) => w.email)).select('email');
  if (exceptUserId) query.whereNot('user_id', exceptUserId);
  const taken = new Set(((await query) as Array<{ email: string }>).map((r) => r.email));
  const problems = wanted.filter((w) => taken.has(w.email)).map((w) => ({ field: w.field, message: 'is already taken' }));
  if (problems.length) {
    throw new AppError('already_exists', `User with ${problems.map((p) => p.field).join(', ')} ${problems.length > 1 ? 'already exist' : 'already exists'}`, problems);
  }
}

/** Translates the database's own uniqueness rules (the backstop of concurrent writes). */
export function emailConflict(error: unknown, email: string): unknown {
  if (isUniqueViolation(error, 'users_email')) return errors.alreadyExists('user', 'email', email);
  if (isUniqueViolation(error, 'user_emails_pkey')) return errors.alreadyExists('user', 'email', 'one of the addresses');
  return error;
}

export async function insertUser(ctx: Ctx, input: NewUser): Promise<UserRow> {
  const { password, ...columns } = input;
  if (password != null) assertPasswordPolicy('password', password);
  const email = normaliseEmail(input.email);
  const alternates = Array.isArray(columns.alternate_emails) ? (columns.alternate_emails as string[]) : undefined;
  await assertEmailsFree(ctx, { email, alternate_emails: alternates }, null);
  // The automatic link: a customer at an organization's domain joins it unless one was named.
  if (input.role === 'customer' && columns.organization_id == null) {
    const organizationId = await organizationForEmail(ctx, email);
    if (organizationId) columns.organization_id = organizationId;
  }
  try {
    return await UserRecord.insertIn(ctx, {
      ...columns,
      email,
      name: input.name.trim(),
      password_hash: password != null ? await hashPassword(password) : null,
      password_changed_at: password != null ? ctx.now : null,
      created_at: ctx.now,
      updated_at: ctx.now,
    });
  } catch (error) {
    throw emailConflict(error, email);
  }
}

/** The user reached at `email`, primary or alternate (inbound mail, a ticket's requester). */
export async function findUserByAnyEmail(ctx: Ctx, email: string): Promise<UserRow | null> {
  const row = await scoped<{ user_id: string }>(ctx, 'user_emails').where('email', normaliseEmail(email)).first('user_id');
  return row ? findUser(ctx, row.user_id) : null;
}

/**
 * One user of ctx's tenant by id. `pinConfig`: the same statement reads the tenant's configuration
 * version and pins it (src/db/config-cache.ts), for a write whose first read is this user (a
 * create's requester); when no user is found nothing is pinned.
 */
export async function findUser(ctx: Ctx, id: string, options: { pinConfig?: boolean } = {}): Promise<UserRow | null> {
  if (!options.pinConfig) return (await UserRecord.findIn(ctx, id)) ?? null;
  const qb = selectConfigVersion(ctx, UserRecord.scoped(ctx).select('users.*')).where('users.id', id).limit(1);
  const [user] = await selectModels(UserRecord, prepared(qb));
  if (user) pinFromRow(ctx, user);
  return user ?? null;
}

export async function findUserByEmail(ctx: Ctx, email: string): Promise<UserRow | null> {
  return (await UserRecord.scoped(ctx).whereRaw('lower(users.email) = ?', [normaliseEmail(email)]).first()) ?? null;
}
