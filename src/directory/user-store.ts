import type { Ctx, Role } from '../core/context.js';
import { errors } from '../core/errors.js';
import { uuidv7 } from '../core/ids.js';
import { insertScoped, isUniqueViolation, scoped } from '../db/tenant-scope.js';
import { assertPasswordPolicy, hashPassword } from '../auth/passwords.js';

/**
 * The users table's storage rules, shared by every path that creates or reads a user (tenant
 * bootstrap, staff intake, customer registration): normalised email, hashed password, uniqueness.
 */
export interface UserRow {
  tenant_id: string;
  id: string;
  email: string;
  name: string;
  role: Role;
  active: boolean;
  password_hash: string | null;
  phone: string | null;
  notes: string | null;
  department: string | null;
  alternate_emails: string[];
  custom_fields: Record<string, unknown>;
  is_vip: boolean;
  max_concurrent_conversations: number | null;
  organization_id: string | null;
  avatar_url: string | null;
  timezone: string | null;
  locale: string | null;
  two_factor_enabled: boolean;
  two_factor_secret_enc: string | null;
  two_factor_pending_secret_enc: string | null;
  two_factor_last_step: string | null;
  invited_at: Date | null;
  last_login_at: Date | null;
  password_changed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

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
    const [row] = await insertScoped<UserRow>(ctx, 'users', {
      ...columns,
      id: uuidv7(ctx.now.getTime()),
      email,
      name: input.name.trim(),
      password_hash: password != null ? await hashPassword(password) : null,
      password_changed_at: password != null ? ctx.now : null,
      created_at: ctx.now,
      updated_at: ctx.now,
    });
    return row!;
  } catch (error) {
    if (isUniqueViolation(error, 'users_email')) throw errors.alreadyExists('user', 'email', email);
    throw error;
  }
}

export async function findUser(ctx: Ctx, id: string): Promise<UserRow | null> {
  return (await scoped<UserRow>(ctx, 'users').where('id', id).first()) ?? null;
}

export async function findUserByEmail(ctx: Ctx, email: string): Promise<UserRow | null> {
  return (await scoped<UserRow>(ctx, 'users').whereRaw('lower(email) = ?', [normaliseEmail(email)]).first()) ?? null;
}
