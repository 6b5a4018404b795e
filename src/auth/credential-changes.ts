import type { EventListener } from '../events/listener.js';
import type { CredentialCache, CachedCredential } from './credential-cache.js';

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
