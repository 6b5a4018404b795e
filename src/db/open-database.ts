import type { Config } from '../core/config.js';
import { openEmbeddedDatabase, type EmbeddedOptions } from './embedded.js';

/**
 * The database a process uses (CONTRACT §9): DATABASE_URL when set, else the embedded server of
 * the data dir — the one a running `serve` started, or one started now and stopped by `close()`.
 */
export interface OpenedDatabase {
  url: string;
  /** 'external' (DATABASE_URL), or the embedded server: 'started' by us, or 'shared' with a running serve. */
  kind: 'external' | 'started' | 'shared';
  /** Something the operator should hear once at start-up about the embedded server, or null. */
  notice: string | null;
  close(): Promise<void>;
}

export async function openDatabase(config: Config, options: EmbeddedOptions = {}): Promise<OpenedDatabase> {
  if (config.databaseUrl) return { url: config.databaseUrl, kind: 'external', notice: null, close: async () => undefined };
  const embedded = await openEmbeddedDatabase(config.dataDir, options);
  return { url: embedded.url, kind: embedded.owned ? 'started' : 'shared', notice: embedded.notice, close: () => embedded.stop() };
}
