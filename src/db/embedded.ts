import { existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { isAbsolute, join } from 'node:path';
import pg from 'pg';
import { ensureDataDir } from '../core/data-dir.js';
import { isAppError } from '../core/errors.js';
import { canConnect } from './connection.js';
import { embeddedFailure } from './embedded-failures.js';
import {
  clusterDirOf, newCredentials, readSettings, recordedCluster, writeSettings, SETTINGS_FILE, type EmbeddedSettings,
} from './embedded-settings.js';
import { platformBinaries, type BinariesResolver, type PostgresBinaries } from './postgres-binaries.js';
import { initCluster, startPostgres, type PostgresSpec, type RunningPostgres } from './postgres-process.js';
import { createStagingDir, postgresOsUser, prepareClusterDir, stageRuntime, POSTGRES_OS_USER, type OsUser } from './root-staging.js';

/**
 * The zero-setup database: real PostgreSQL binaries from npm, with its cluster in `<dataDir>/pg`
 * (under root: in a staging dir, see root-staging.ts). The data dir records the port, credentials
 * and the cluster's place (`postgres.json`), so a second command finds a server that a running
 * `serve` already started and connects to it instead of starting another.
 */
export interface EmbeddedDatabase {
  url: string;
  /** True when this process started the server (and so must stop it). */
  owned: boolean;
  clusterDir: string;
  /** Under root: the staging dir holding the cluster and the programs; null otherwise. */
  stagingDir: string | null;
  /** What the operator should hear once at start-up (where the cluster lives and why), or null. */
  notice: string | null;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  onLog?: (line: string) => void;
  /** Where the programs come from: the platform package by default. */
  binaries?: BinariesResolver;
  /** Picks the port for a start: a free one by default; a start that finds it taken tries another. */
  pickPort?: () => Promise<number>;
  /** Under root: where staging dirs may be made, in order of preference. */
  stagingBases?: string[];
  /** Run the server in a process group of its own, stopped only by us (src/db/postgres-process.ts). */
  ownProcessGroup?: boolean;
}

const DATABASE = 'helpdesk';
/** A port picked free can be taken by another program before PostgreSQL binds it: try anew. */
const PORT_ATTEMPTS = 3;

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

function urlFor(settings: EmbeddedSettings, database: string): string {
  return `postgres://${settings.user}:${encodeURIComponent(settings.password)}@127.0.0.1:${settings.port}/${database}`;
}

interface Layout {
  clusterDir: string;
  binaries: PostgresBinaries;
  runAs?: OsUser;
  stagingDir: string | null;
  /** A staging dir made by this call: removed again when the first initdb fails. */
  madeStaging: boolean;
}

/**
 * Where the cluster and the programs are. As an ordinary user: the cluster in the data dir, the
 * programs where npm put them. As root: both in a staging dir that the `postgres` user can reach;
 * a cluster that an earlier version made in the data dir itself stays there.
 */
async function layoutFor(dataDir: string, settings: EmbeddedSettings | null, options: EmbeddedOptions): Promise<Layout> {
  const binaries = await (options.binaries ?? platformBinaries)();
  const asRoot = process.getuid?.() === 0;
  if (!asRoot) return { clusterDir: clusterDirOf(dataDir, settings), binaries, stagingDir: null, madeStaging: false };

  const runAs = postgresOsUser();
  const recordedStaging = settings?.staging && existsSync(settings.staging) ? settings.staging : null;
  const stagingDir = recordedStaging ?? createStagingDir(dataDir, options.stagingBases);
  // A cluster in the data dir (recorded as a relative path, or made there by an earlier version)
  // stays there; any other lives in the staging dir.
  const inDataDirCluster = settings?.cluster ? !isAbsolute(settings.cluster) : existsSync(join(dataDir, 'pg', 'PG_VERSION'));
  const clusterDir = inDataDirCluster ? clusterDirOf(dataDir, settings) : join(stagingDir, 'pg');
  const madeStaging = recordedStaging === null;
  let staged: PostgresBinaries;
  try {
    staged = stageRuntime(binaries, stagingDir);
  } catch (error) {
    if (madeStaging) rmSync(stagingDir, { recursive: true, force: true });
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw embeddedFailure('no_staging_dir', `the PostgreSQL programs could not be copied to ${stagingDir} (${code}), where the system user "${POSTGRES_OS_USER}" would run them. Free some space there, run Helpdesk as an ordinary user, or set DATABASE_URL.`, { staging: stagingDir });
  }
  return { clusterDir, binaries: staged, runAs, stagingDir, madeStaging };
}

export async function openEmbeddedDatabase(dataDir: string, options: EmbeddedOptions = {}): Promise<EmbeddedDatabase> {
  const onLog = options.onLog ?? (() => undefined);
  ensureDataDir(dataDir);
  const stored = readSettings(dataDir);

  // A server for this data dir may already be running (started by `serve`): use it.
  if (stored && (await canConnect(urlFor(stored, 'postgres'), 1500))) {
    const clusterDir = clusterDirOf(dataDir, stored);
    return { url: urlFor(stored, DATABASE), owned: false, clusterDir, stagingDir: stored.staging ?? null, notice: null, stop: async () => undefined };
  }

  const layout = await layoutFor(dataDir, stored, options);
  const credentials = stored ? { user: stored.user, password: stored.password } : newCredentials();
  const spec: Omit<PostgresSpec, 'port'> = { ...credentials, binaries: layout.binaries, clusterDir: layout.clusterDir, runAs: layout.runAs, onLog };

  // The settings are written before the server starts (and before a first initdb, which also
  // proves the data dir writable), so a command started meanwhile finds the server.
  const record = (port: number): EmbeddedSettings => ({
    port,
    ...credentials,
    cluster: recordedCluster(dataDir, layout.clusterDir),
    ...(layout.stagingDir ? { staging: layout.stagingDir } : {}),
  });
  const pickPort = options.pickPort ?? freePort;
  let settings = record(await pickPort());
  try {
    writeSettings(dataDir, settings);
    if (!existsSync(join(layout.clusterDir, 'PG_VERSION'))) {
      if (layout.runAs) prepareClusterDir(layout.clusterDir, layout.runAs);
      await initCluster({ ...spec, port: settings.port });
    }
  } catch (error) {
    // A staging dir made for a cluster that never came to be would only be litter.
    if (layout.madeStaging && layout.stagingDir) rmSync(layout.stagingDir, { recursive: true, force: true });
    throw error;
  }

  let server: RunningPostgres | null = null;
  for (let attempt = 1; !server; attempt++) {
    try {
      server = await startPostgres({ ...spec, port: settings.port }, { ownProcessGroup: options.ownProcessGroup === true });
    } catch (error) {
      const lostRace = isAppError(error) && (error.details as { reason?: string } | undefined)?.reason === 'port_in_use';
      if (!lostRace || attempt >= PORT_ATTEMPTS) throw error;
      settings = record(await pickPort());
      writeSettings(dataDir, settings);
    }
  }

  try {
    await ensureDatabase(urlFor(settings, 'postgres'));
  } catch (error) {
    await server.stop();
    throw error;
  }

  return {
    url: urlFor(settings, DATABASE),
    owned: true,
    clusterDir: layout.clusterDir,
    stagingDir: layout.stagingDir,
    notice: layout.runAs ? rootNotice(dataDir, layout) : null,
    stop: () => server.stop(),
  };
}

async function ensureDatabase(adminUrl: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const exists = await admin.query('select 1 from pg_database where datname = $1', [DATABASE]);
    if (exists.rowCount === 0) await admin.query(`create database ${DATABASE}`);
  } finally {
    await admin.end();
  }
}

function rootNotice(dataDir: string, layout: Layout): string {
  const what = layout.clusterDir.startsWith(layout.stagingDir + '/') ? 'its cluster and a copy of its programs are' : 'a copy of its programs is';
  return (
    `Running as root: PostgreSQL may not run as root, so the embedded database runs as the system user "${POSTGRES_OS_USER}", ` +
    `and ${what} in ${layout.stagingDir}, where that user can reach them (recorded in ${join(dataDir, SETTINGS_FILE)}).`
  );
}
