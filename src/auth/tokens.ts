import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { sha256Hex } from '../core/crypto.js';
import type { Actor, Role } from '../core/context.js';
import { UserRecord } from '../directory/models.js';
import { ROLE_SCOPES } from './scopes.js';
import { scopesOf, type Permissions } from '../rbac/permissions.js';

/**
 * Bearer tokens (CONTRACT §3): sessions `hds_<random>`, API keys `hdk_<prefix>_<random>`, each with
 * 256 bits of randomness and stored only as a SHA-256 hash.
 */
export const SESSION_TTL_SECONDS = 24 * 60 * 60;

export function newSessionToken(): { token: string; hash: string } {
  const token = `hds_${randomBytes(32).toString('base64url')}`;
  return { token, hash: sha256Hex(token) };
}

const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function newApiKey(): { key: string; prefix: string; last4: string; hash: string } {
  const prefix = Array.from(randomBytes(8), (b) => PREFIX_ALPHABET[b % PREFIX_ALPHABET.length]).join('');
  const key = `hdk_${prefix}_${randomBytes(32).toString('base64url')}`;
  return { key, prefix, last4: key.slice(-4), hash: sha256Hex(key) };
}

export interface ResolvedToken {
  tenantId: string;
  actor: Actor;
  /** The caller's user row as of the lookup (same statement): `GET /auth/me` answers from it. */
  user: UserRecord;
}

/** The credential's columns (prefixed, so they never collide with the user's) and the user's. */
interface Row {
  cred_tenant_id: string;
  cred_id: string;
  cred_scopes: string[] | null;
  /** The permission matrix of the user's custom role, when they hold one. */
  cred_role_permissions: Permissions | null;
  cred_last_used_at: Date | null;
  [userColumn: string]: unknown;
}

/**
 * Finds the tenant and actor of a bearer token. This is the one deliberate cross-tenant read: the
 * token decides the tenant. Expired, revoked and deactivated-user tokens resolve to null.
 */
export async function resolveBearerToken(db: Knex, token: string, now: Date): Promise<ResolvedToken | null> {
  const kind = token.startsWith('hds_') ? 'session' : token.startsWith('hdk_') ? 'api_key' : null;
  if (!kind || token.length > 200) return null;
  const hash = sha256Hex(token);
  const table = kind === 'session' ? 'sessions' : 'api_keys';
  const row: Row | undefined = await db(`${table} as c`)
    .comment('cross-tenant: bearer token lookup decides the tenant')
    .join('users as u', function () {
      this.on('u.tenant_id', '=', 'c.tenant_id').andOn('u.id', '=', 'c.user_id');
    })
    // A custom role's matrix decides the scopes (RBAC): read with the user, in the same statement.
    .leftJoin('roles as r', function () {
      this.on('r.tenant_id', '=', 'u.tenant_id').andOn('r.id', '=', 'u.custom_role_id');
    })
    .where('c.token_hash', hash)
    .whereNull('c.revoked_at')
    .where(function () {
      this.whereNull('c.expires_at').orWhere('c.expires_at', '>', now);
    })
    .where('u.active', true)
    .first(
      'c.tenant_id as cred_tenant_id', 'c.id as cred_id', 'c.last_used_at as cred_last_used_at',
      kind === 'api_key' ? 'c.scopes as cred_scopes' : db.raw('null::text[] as cred_scopes'),
      'r.permissions as cred_role_permissions',
      'u.*',
    );
  if (!row) return null;
  const { cred_tenant_id: tenantId, cred_id: credentialId, cred_scopes: scopes, cred_last_used_at: lastUsedAt, cred_role_permissions: rolePermissions, ...userColumns } = row;
  const user = UserRecord.fromDatabaseJson(userColumns);

  // Touch last_used_at at most once a minute: enough for "last used" displays, cheap on hot paths.
  if (!lastUsedAt || now.getTime() - lastUsedAt.getTime() > 60_000) {
    await db(table).where({ tenant_id: tenantId, id: credentialId }).update({ last_used_at: now });
  }

  // A custom role's user is staff holding exactly the scopes its matrix grants; else the role's.
  const roleScopes = user.custom_role_id && rolePermissions ? scopesOf(rolePermissions) : ROLE_SCOPES[user.role];
  const actor: Actor = {
    type: kind === 'session' ? 'user' : 'api_key',
    userId: user.id,
    name: user.name,
    role: user.role,
    apiKeyId: kind === 'api_key' ? credentialId : null,
    sessionId: kind === 'session' ? credentialId : null,
    // A key acts for its owner but never beyond the owner's role: a demoted admin's keys shrink.
    scopes: kind === 'session' ? roleScopes : effectiveKeyScopes(scopes ?? [], user.role, roleScopes),
  };
  return { tenantId, actor, user };
}

function effectiveKeyScopes(keyScopes: string[], role: Role, roleScopes: readonly string[]): string[] {
  if (role === 'admin') return keyScopes;
  return keyScopes.filter((s) => roleScopes.includes(s) || roleScopes.includes(`${s.split(':')[0]}:*`));
}
