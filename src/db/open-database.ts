import type { Config } from '../core/config.js';
import { openEmbeddedDatabase } from './embedded.js';

/**
 * The database a process uses (CONTRACT §9): DATABASE_URL when set, else the embedded server of
 * the data dir — the one a running `serve` started, or one started now and stopped by `close()`.
 */
export interface OpenedDatabase {
  url: string;
  /** 'external' (DATABASE_URL), or the embedded server: 'started' by us, or 'shared' with a running serve. */
  kind: 'external' | 'started' | 'shared';
  close(): Promise<void>;
}

export async function openDatabase(config: Config, onLog?: (line: string) => void): Promise<OpenedDatabase> {
  if (config.databaseUrl) return { url: config.databaseUrl, kind: 'external', close: async () => undefined };
  const embedded = await openEmbeddedDatabase(config.dataDir, onLog);
  return { url: embedded.url, kind: embedded.owned ? 'started' : 'shared', close: () => embedded.stop() };
}
