import { Redis } from 'ioredis';
import type { Config } from './config.js';
import type { Deps } from './context.js';
import { SecretBox } from './crypto.js';
import { createLogger, type Logger } from './logging.js';
import { createDb } from '../db/connection.js';
import { createMailer } from '../mail/mailer.js';
import { EventListener } from '../events/listener.js';
import { closeTransports } from '../mail/transports.js';

/** Builds the process-wide collaborators from configuration and a database URL. */
export function createDeps(config: Config, databaseUrl: string, options: { log?: Logger; poolMax?: number } = {}): Deps {
  const log = options.log ?? createLogger(config.logLevel);
  const redis = config.redisUrl
    ? new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false })
    : null;
  redis?.on('error', (error) => log.warn({ err: error }, 'redis error'));
  return {
    db: createDb(databaseUrl, { max: options.poolMax }),
    counters: createDb(databaseUrl, { max: 2 }),
    config,
    box: new SecretBox(config.secretKey),
    mailer: createMailer(config.smtpUrl, config.mailFrom, log),
    log,
    redis,
    events: new EventListener(databaseUrl, log),
  };
}

export async function closeDeps(deps: Deps): Promise<void> {
  deps.mailer.close();
  closeTransports();
  deps.redis?.disconnect();
  await deps.events.close();
  await deps.counters?.destroy();
  await deps.db.destroy();
}
