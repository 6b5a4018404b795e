import type { Ctx } from '../core/context.js';
import type { CredentialCache, CachedCredential } from '../core/credential-cache.js';
import type { EventListener } from '../events/listener.js';

/**
 * The channel the credential triggers NOTIFY (migrations/20261128190000_credential_changes.ts): the
 * payload is the id of a tenant whose sessions, API keys, users, roles or tenant row changed, or
 * `*` when a table was truncated.
 */
export const CREDENTIALS_CHANNEL = 'helpdesk_credentials';

/**
 * Keeps `cache` in step with the database over the process's one LISTEN connection: a tenant's
 * entries are forgotten when it is named, and the cache is used only while LISTEN is active.
 */
export function watchCredentialChanges<V extends CachedCredential>(events: EventListener, cache: CredentialCache<V>): void {
  events.watch(CREDENTIALS_CHANNEL, {
    notify: (payload) => (payload === '*' ? cache.forgetAll() : cache.forgetTenant(payload)),
    listening: (active) => cache.setListening(active),
  });
}

/**
 * For a service that changes a credential, a user or a role: once its transaction has committed,
 * this process forgets the tenant's cached credentials, so the very next request here sees the
 * change (revocation is immediate where it was made). Other daemons hear of it through NOTIFY.
 */
export function forgetCredentialsOnCommit(ctx: Ctx): void {
  const { deps, tenantId } = ctx;
  ctx.afterCommit(() => deps.credentials.forgetTenant(tenantId));
}
