import type { Knex } from 'knex';
import type { Config } from './config.js';
import type { SecretBox } from './crypto.js';
import type { Logger } from './logging.js';
import type { Mailer } from '../mail/mailer.js';
import type { Redis } from 'ioredis';
import type { EventListener } from '../events/listener.js';
import type { CachedCredential, CredentialCache } from './credential-cache.js';

export type Role = 'admin' | 'agent' | 'customer';
export const ROLES: readonly Role[] = ['admin', 'agent', 'customer'];

/** Who is acting: a signed-in user, an API key (acting for its owner), the CLI, or the system. */
export interface Actor {
  type: 'user' | 'api_key' | 'cli' | 'system';
  userId: string | null;
  name: string;
  role: Role | null;
  apiKeyId: string | null;
  sessionId: string | null;
  /** Effective scopes; `admin` grants everything. */
  scopes: readonly string[];
}

/** Process-wide collaborators, built once at start-up and shared by every context. */
export interface Deps {
  db: Knex;
  config: Config;
  box: SecretBox;
  mailer: Mailer;
  log: Logger;
  /** Shared cache and rate-limit counters; null without REDIS_URL. */
  redis: Redis | null;
  /** The process's one LISTEN connection for committed events (opened on first use). */
  events: EventListener;
  /**
   * Resolved bearer tokens, so a request's authentication is a lookup in memory; kept exact by
   * NOTIFY from triggers and by the process's own changes (src/core/credential-cache.ts).
   */
  credentials: CredentialCache<CachedCredential>;
  /**
   * A small pool for the event publisher's runs (src/events/publisher.ts). Every answered write
   * waits for a run, so a run must not queue behind the requests waiting for `db` when that pool is
   * busy.
   */
  publisher: Knex;
}

/**
 * The context of one domain operation (ARCHITECTURE rule 1): which tenant, who acts, the
 * transaction to use, and what time it is. `afterCommit` collects effects that must run only
 * once the change is durable (mail, NOTIFY).
 */
export interface Ctx {
  tenantId: string;
  actor: Actor;
  trx: Knex | Knex.Transaction;
  now: Date;
  deps: Deps;
  requestId: string | null;
  ip: string | null;
  afterCommit(effect: () => Promise<void> | void): void;
  /**
   * Set by the legacy import only: the change reproduces history, so event consumers (webhook
   * outbox, mail, push) and the ticket and message hooks (SLA clocks, routing, snooze) do not run.
   * The events themselves are still recorded (the timeline keeps them), but not published after
   * each commit: the importer runs the tenant's publisher once per phase (and the `event-publish`
   * job numbers whatever a killed run left), so thousands of batches do not each take the tenant's
   * publisher lock.
   */
  quiet?: boolean;
}

export const SYSTEM_ACTOR: Actor = {
  type: 'system', userId: null, name: 'System', role: null, apiKeyId: null, sessionId: null, scopes: ['admin'],
};

export const CLI_ACTOR: Actor = {
  type: 'cli', userId: null, name: 'CLI operator', role: null, apiKeyId: null, sessionId: null, scopes: ['admin'],
};
