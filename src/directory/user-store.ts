import type { Ctx, Role } from '../core/context.js';
import { errors } from '../core/errors.js';
import { isUniqueViolation } from '../db/tenant-scope.js';
import { UserRecord } from './models.js';
import { assertPasswordPolicy, hashPassword } from '../auth/passwords.js';

/**
 * The users table's storage rules, shared by every path that creates or reads a user (tenant
 * bootstrap, staff intake, customer registration): normalised email, hashed password, uniqueness.
 * A stored user is the directory's model, `UserRecord`.
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

export async function insertUser(ctx: Ctx, input: NewUser): Promise<UserRow> {
  const { password, ...columns } = input;
  if (password != null) assertPasswordPolicy('password', password);
  const email = normaliseEmail(input.email);
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
    if (isUniqueViolation(error, 'users_email')) throw errors.alreadyExists('user', 'email', email);
    throw error;
  }
}

export async function findUser(ctx: Ctx, id: string): Promise<UserRow | null> {
  return (await UserRecord.findIn(ctx, id)) ?? null;
}

export async function findUserByEmail(ctx: Ctx, email: string): Promise<UserRow | null> {
  return (await UserRecord.scoped(ctx).whereRaw('lower(users.email) = ?', [normaliseEmail(email)]).first()) ?? null;
}
