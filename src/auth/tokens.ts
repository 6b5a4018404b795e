import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { sha256Hex } from '../core/crypto.js';
import type { Actor, Role } from '../core/context.js';
import { UserRecord } from '../directory/models.js';
import { ROLE_SCOPES } from './scopes.js';
import { scopesOf, type Permissions } from '../rbac/permissions.js';
import type { CachedCredential, CredentialCache } from '../core/credential-cache.js';

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

/**
 * What the credential cache keeps of a resolved token (src/core/credential-cache.ts): the resolution, frozen
 * because requests share it, and what the request's own time is checked against.
 */
export interface CachedToken extends CachedCredential {
  resolved: Readonly<ResolvedToken>;
  table: 'sessions' | 'api_keys';
  credentialId: string;
  /** When this process last marked the credential used (or read that it was); see touchIfDue. */
  lastUsedAt: Date | null;
}

/** The credential's columns (prefixed, so they never collide with the user's) and the user's. */
interface Row {
  cred_tenant_id: string;
  cred_id: string;
  cred_scopes: string[] | null;
  /** The permission matrix of the user's custom role, when they hold one. */
  cred_role_permissions: Permissions | null;
  cred_expires_at: Date | null;
  cred_last_used_at: Date | null;
  [userColumn: string]: unknown;
}

/**
 * Finds the tenant and actor of a bearer token. This is the one deliberate cross-tenant read: the
 * token decides the tenant. Expired, revoked and deactivated-user tokens resolve to null.
 *
 * With `cache` (the daemon's requests) a token resolved before is answered from memory, as long as
 * the cache may trust it at `now`; without it (the heartbeat re-check of a live stream) the
 * database is asked.
 */
export async function resolveBearerToken(
  db: Knex, token: string, now: Date, cache?: CredentialCache<CachedCredential>,
): Promise<ResolvedToken | null> {
  const kind = token.startsWith('hds_') ? 'session' : token.startsWith('hdk_') ? 'api_key' : null;
  if (!kind || token.length > 200) return null;
  const hash = sha256Hex(token);
  // The process's cache is typed by what the core knows of its entries; this function is the only
  // one that stores them, and it stores CachedToken.
  const hit = cache?.get(hash, now) as CachedToken | null | undefined;
  if (hit) {
    await touchIfDue(db, hit, now);
    return hit.resolved;
  }
  const ticket = cache?.ticket();
  const found = await lookUp(db, kind, hash, now);
  if (!found) return null;
  await touchIfDue(db, found, now);
  if (cache && ticket !== undefined) cache.put(ticket, hash, found, now);
  return found.resolved;
}

async function lookUp(db: Knex, kind: 'session' | 'api_key', hash: string, now: Date): Promise<CachedToken | null> {
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
      'c.tenant_id as cred_tenant_id', 'c.id as cred_id', 'c.expires_at as cred_expires_at', 'c.last_used_at as cred_last_used_at',
      kind === 'api_key' ? 'c.scopes as cred_scopes' : db.raw('null::text[] as cred_scopes'),
      'r.permissions as cred_role_permissions',
      'u.*',
    );
  if (!row) return null;
  const {
    cred_tenant_id: tenantId, cred_id: credentialId, cred_scopes: scopes, cred_expires_at: expiresAt,
    cred_last_used_at: lastUsedAt, cred_role_permissions: rolePermissions, ...userColumns
  } = row;
  const user = UserRecord.fromDatabaseJson(userColumns);

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
    scopes: Object.freeze(kind === 'session' ? [...roleScopes] : effectiveKeyScopes(scopes ?? [], user.role, roleScopes)),
  };
  // Frozen: a cached resolution is shared by every request of the credential until it is forgotten.
  const resolved = Object.freeze({ tenantId, actor: Object.freeze(actor), user: Object.freeze(user) });
  return { tenantId, expiresAt, resolved, table, credentialId, lastUsedAt };
}

/**
 * Touches last_used_at at most once a minute per credential: enough for "last used" displays, and
 * no write on the hot path. The minute is counted from what this process knows (the row's value
 * when read, then its own touches): several daemons each touch at most once a minute. The touch
 * changes no column a resolution depends on, so it invalidates no cache (see the triggers).
 */
async function touchIfDue(db: Knex, credential: CachedToken, now: Date): Promise<void> {
  const last = credential.lastUsedAt;
  if (last && now.getTime() - last.getTime() <= 60_000) return;
  // Marked before the write, so concurrent requests of the same credential do not all write.
  credential.lastUsedAt = now;
  await db(credential.table).where({ tenant_id: credential.tenantId, id: credential.credentialId }).update({ last_used_at: now });
}

function effectiveKeyScopes(keyScopes: string[], role: Role, roleScopes: readonly string[]): string[] {
  if (role === 'admin') return keyScopes;
  return keyScopes.filter((s) => roleScopes.includes(s) || roleScopes.includes(`${s.split(':')[0]}:*`));
}
