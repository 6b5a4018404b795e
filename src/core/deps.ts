import { Redis } from 'ioredis';
import type { Config } from './config.js';
import type { Deps } from './context.js';
import { SecretBox } from './crypto.js';
import { createLogger, type Logger } from './logging.js';
import { createDb } from '../db/connection.js';
import { createMailer } from '../mail/mailer.js';
import { EventListener } from '../events/listener.js';
import { CredentialCache } from './credential-cache.js';
import { watchCredentialChanges } from '../auth/credential-changes.js';
import { closeTransports } from '../mail/transports.js';

/**
 * At most this many resolved tokens per process. One entry (the actor and the user row) takes
 * about 2.7 kB of heap, so the cache stays under 15 MB of the daemon's 300 MB budget; with entries
 * living a few seconds, that is more distinct credentials than one daemon serves in that time.
 */
const CREDENTIAL_CACHE_ENTRIES = 5_000;

/** Builds the process-wide collaborators from configuration and a database URL. */
export function createDeps(config: Config, databaseUrl: string, options: { log?: Logger; poolMax?: number } = {}): Deps {
  const log = options.log ?? createLogger(config.logLevel);
  const redis = config.redisUrl
    ? new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false })
    : null;
  redis?.on('error', (error) => log.warn({ err: error }, 'redis error'));
  const events = new EventListener(databaseUrl, log);
  return {
    db: createDb(databaseUrl, { max: options.poolMax }),
    publisher: createDb(databaseUrl, { max: 2 }),
    config,
    box: new SecretBox(config.secretKey),
    mailer: createMailer(config.smtpUrl, config.mailFrom, log),
    log,
    redis,
    events,
    // Listens for changes through `events` once the first token is resolved (never in the CLI).
    credentials: new CredentialCache({
      ttlMs: config.credentialCacheMs,
      maxEntries: CREDENTIAL_CACHE_ENTRIES,
      start: (cache) => watchCredentialChanges(events, cache),
    }),
  };
}

export async function closeDeps(deps: Deps): Promise<void> {
  deps.mailer.close();
  closeTransports();
  deps.redis?.disconnect();
  await deps.events.close();
  await deps.publisher.destroy();
  await deps.db.destroy();
}
