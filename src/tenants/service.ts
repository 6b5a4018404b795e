import type { Knex } from 'knex';
import type { Actor, Deps } from '../core/context.js';
import { errors } from '../core/errors.js';
import { randomToken, uuidv7 } from '../core/ids.js';
import { toRfc3339 } from '../core/clock.js';
import { inTransaction } from '../db/transaction.js';
import { isUniqueViolation } from '../db/tenant-scope.js';
import { insertUser } from '../directory/user-store.js';
import { issueApiKey } from '../auth/api-key-store.js';
import { recordAudit } from '../audit/service.js';
import { createDefaultVocabularies } from '../vocab/defaults.js';

/**
 * Tenants are provisioned by operators (CLI) and on a fresh install's first start. Creating one
 * creates its first administrator and an `admin`-scoped API key for provisioning scripts.
 */
export interface TenantOut {
  id: string;
  slug: string;
  name: string;
  created_at: string;
}

export interface CreatedTenant {
  tenant: TenantOut;
  admin: { id: string; email: string; name: string };
  /** The administrator's password when it was generated (shown once), else null. */
  admin_password: string | null;
  api_key: string;
}

export const SLUG_RE = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function tenantOut(row: { id: string; slug: string; name: string; created_at: Date }): TenantOut {
  return { id: row.id, slug: row.slug, name: row.name, created_at: toRfc3339(row.created_at)! };
}

export interface CreateTenantInput {
  slug: string;
  name: string;
  adminEmail: string;
  adminName?: string;
  adminPassword?: string | null;
}

export async function createTenant(deps: Deps, input: CreateTenantInput, actor: Actor, now: Date): Promise<CreatedTenant> {
  const slug = input.slug.trim().toLowerCase();
  const problems = [];
  if (!SLUG_RE.test(slug)) problems.push({ field: 'slug', message: 'must be 1-63 lowercase letters, digits or hyphens, not starting or ending with a hyphen' });
  if (!input.name.trim()) problems.push({ field: 'name', message: 'is required' });
  if (!/^[^\s@]+@[^\s@]+$/.test(input.adminEmail.trim())) problems.push({ field: 'admin_email', message: 'must be an email address' });
  if (problems.length) throw errors.validation(problems);

  const generated = input.adminPassword ? null : randomToken(15);
  const password = input.adminPassword ?? generated!;
  const tenantId = uuidv7(now.getTime());
  try {
    return await inTransaction(deps, { tenantId, actor, now }, async (ctx) => {
      const [row] = await ctx.trx('tenants')
        .insert({ id: tenantId, slug, name: input.name.trim(), created_at: now, updated_at: now })
        .returning(['id', 'slug', 'name', 'created_at']);
      await createDefaultVocabularies(ctx);
      const admin = await insertUser(ctx, {
        email: input.adminEmail,
        name: input.adminName ?? 'Administrator',
        role: 'admin',
        password,
      });
      const { key } = await issueApiKey(ctx, { userId: admin.id, name: 'Provisioning key', scopes: ['admin'], expiresAt: null });
      await recordAudit(ctx, { action: 'tenant.created', resourceType: 'tenant', resourceId: tenantId, changes: { slug, name: row.name } });
      await recordAudit(ctx, { action: 'user.created', resourceType: 'user', resourceId: admin.id, changes: { email: admin.email, role: 'admin' } });
      return {
        tenant: tenantOut(row),
        admin: { id: admin.id, email: admin.email, name: admin.name },
        admin_password: generated,
        api_key: key,
      };
    });
  } catch (error) {
    if (isUniqueViolation(error, 'tenants_slug_key')) throw errors.alreadyExists('tenant', 'slug', slug);
    throw error;
  }
}

export async function listTenants(db: Knex): Promise<TenantOut[]> {
  const rows = await db('tenants').orderBy('created_at').orderBy('id').select('id', 'slug', 'name', 'created_at');
  return rows.map(tenantOut);
}

/**
 * First start of an empty database: create tenant `default` with an administrator whose login is
 * printed once. Returns null when any tenant exists (or another daemon won the race).
 */
export async function bootstrapDefaultTenant(deps: Deps, adminEmail: string, actor: Actor, now: Date): Promise<CreatedTenant | null> {
  const existing = await deps.db('tenants').first('id');
  if (existing) return null;
  try {
    return await createTenant(deps, { slug: 'default', name: 'Default', adminEmail }, actor, now);
  } catch (error) {
    if ((error as { code?: string }).code === 'already_exists') return null;
    throw error;
  }
}
