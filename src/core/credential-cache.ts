/**
 * The per-process cache of resolved bearer credentials (sessions and API keys), keyed by the
 * SHA-256 hash of the token, never the token: with it a request's authentication is a map lookup
 * instead of a database round trip, which was most of the cost of a read (docs/performance.md
 * "Where the daemon's CPU goes"). Only credentials that resolved are kept; an unknown, expired or
 * revoked token asks the database every time, as before.
 *
 * Why an entry cannot outlive what it was read from:
 * - every change to the rows a resolution reads NOTIFYs the tenant's id, whoever makes it (this
 *   daemon, another one, the CLI, plain SQL): statement triggers, see
 *   migrations/20261128190000_credential_changes.ts and src/auth/credential-changes.ts. The tenant's entries
 *   are then forgotten;
 * - the cache answers and keeps nothing while that LISTEN is not active (before it first is, and
 *   from a lost connection until LISTEN is back), since notifications may be missed meanwhile;
 * - a change made in this process also forgets the tenant's entries itself once it has committed
 *   (`forgetCredentialsOnCommit`, src/auth/credential-changes.ts), so this daemon's next request never depends on NOTIFY timing;
 * - a lookup that began before a forget does not keep what it read (`ticket`/`put`): its row may
 *   predate the change;
 * - an entry is trusted for `ttlMs` at most (a backstop, e.g. for a connection that died without
 *   a word), and never at or after the credential's own expiry, judged by the request's time.
 *
 * The unit of forgetting is the tenant: changes to credentials are rare next to their use, and a
 * forgotten entry costs one lookup to read again.
 */
export interface CachedCredential {
  /** The tenant the credential belongs to (its row's, as the database said). */
  tenantId: string;
  /** The credential's own expiry (a session's; an API key's, if it has one). */
  expiresAt: Date | null;
}

interface Entry<V> {
  value: V;
  /** The time of the request whose lookup stored it (ms). */
  storedAt: number;
}

export interface CredentialCacheOptions<V extends CachedCredential> {
  /** How long an entry may be trusted (0: no caching at all). */
  ttlMs: number;
  /** The most entries kept; the oldest go first. */
  maxEntries: number;
  /** Called on first use (not at start-up: CLI commands and job workers never resolve tokens). */
  start?: (cache: CredentialCache<V>) => void;
}

export class CredentialCache<V extends CachedCredential> {
  /** Insertion order is storage order (a re-stored entry moves to the end): the first is the oldest. */
  private readonly entries = new Map<string, Entry<V>>();
  /** Bumped by every forget: a lookup's result is kept only if none happened while it ran. */
  private generation = 0;
  private listening = false;
  private started = false;

  constructor(private readonly options: CredentialCacheOptions<V>) {}

  /** True while entries are used and kept (LISTEN active and caching configured). */
  get active(): boolean {
    return this.listening && this.options.ttlMs > 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The entry of the token hash, if it may still be trusted at `now` (the request's time). */
  get(hash: string, now: Date): V | null {
    this.startOnce();
    if (!this.active) return null;
    const entry = this.entries.get(hash);
    if (!entry) return null;
    const age = now.getTime() - entry.storedAt;
    const expiresAt = entry.value.expiresAt;
    // A clock that went back makes the age negative: distrust the entry rather than extend it.
    if (age < 0 || age >= this.options.ttlMs || (expiresAt && expiresAt.getTime() <= now.getTime())) {
      this.entries.delete(hash);
      return null;
    }
    return entry.value;
  }

  /** Taken before the database lookup whose result may be kept with `put`. */
  ticket(): number {
    this.startOnce();
    return this.generation;
  }

  /** Keeps a lookup's result, unless anything was forgotten since its ticket was taken. */
  put(ticket: number, hash: string, value: V, now: Date): void {
    if (!this.active || ticket !== this.generation) return;
    this.entries.delete(hash);
    while (this.entries.size >= this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, { value, storedAt: now.getTime() });
  }

  /** Forgets every entry of the tenant (a change to one of its credentials, users or roles). */
  forgetTenant(tenantId: string): void {
    this.generation += 1;
    for (const [hash, entry] of this.entries) if (entry.value.tenantId === tenantId) this.entries.delete(hash);
  }

  forgetAll(): void {
    this.generation += 1;
    this.entries.clear();
  }

  /**
   * LISTEN became active (true): start empty, since changes made before it were not heard. The
   * connection was lost (false): forget everything and keep nothing until it is back.
   */
  setListening(active: boolean): void {
    this.forgetAll();
    this.listening = active;
  }

  private startOnce(): void {
    if (this.started || this.options.ttlMs <= 0) return;
    this.started = true;
    this.options.start?.(this);
  }
}
