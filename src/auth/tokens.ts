import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { sha256Hex } from '../core/crypto.js';
import type { Actor, Role } from '../core/context.js';
import { ROLE_SCOPES } from './scopes.js';

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
}

interface Row {
  tenant_id: string;
  credential_id: string;
  user_id: string;
  name: string;
  role: Role;
  scopes: string[] | null;
  last_used_at: Date | null;
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
    .where('c.token_hash', hash)
    .whereNull('c.revoked_at')
    .where(function () {
      this.whereNull('c.expires_at').orWhere('c.expires_at', '>', now);
    })
    .where('u.active', true)
    .first(
      'c.tenant_id', 'c.id as credential_id', 'c.user_id', 'u.name', 'u.role', 'c.last_used_at',
      kind === 'api_key' ? 'c.scopes' : db.raw('null::text[] as scopes'),
    );
  if (!row) return null;

  // Touch last_used_at at most once a minute: enough for "last used" displays, cheap on hot paths.
  if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() > 60_000) {
    await db(table).where({ tenant_id: row.tenant_id, id: row.credential_id }).update({ last_used_at: now });
  }

  const actor: Actor = {
    type: kind === 'session' ? 'user' : 'api_key',
    userId: row.user_id,
    name: row.name,
    role: row.role,
    apiKeyId: kind === 'api_key' ? row.credential_id : null,
    sessionId: kind === 'session' ? row.credential_id : null,
    // A key acts for its owner but never beyond the owner's role: a demoted admin's keys shrink.
    scopes: kind === 'session' ? ROLE_SCOPES[row.role] : effectiveKeyScopes(row.scopes ?? [], row.role),
  };
  return { tenantId: row.tenant_id, actor };
}

function effectiveKeyScopes(keyScopes: string[], role: Role): string[] {
  if (role === 'admin') return keyScopes;
  const roleScopes = ROLE_SCOPES[role];
  return keyScopes.filter((s) => roleScopes.includes(s) || roleScopes.includes(`${s.split(':')[0]}:*`));
}
