import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/core/config.js';
import { CLI_ACTOR, type Deps } from '../../src/core/context.js';
import { closeDeps, createDeps } from '../../src/core/deps.js';
import { createLogger } from '../../src/core/logging.js';
import { createDb, withDatabase } from '../../src/db/connection.js';
import { migrateLatest } from '../../src/db/migrations.js';
import { createTenant } from '../../src/tenants/service.js';

/** The bench tenant's admin password (the login scenarios sign in with it). */
export const BENCH_PASSWORD = 'benchmark password 123';

export interface ScratchDatabase {
  deps: Deps;
  /** The data directory (blob store) of this run, removed on close. */
  dataDir: string;
  /** The `bench` tenant, created by the first-start path (its admin's API key included). */
  tenant: Awaited<ReturnType<typeof createTenant>>;
  /** Closes the pool, drops the database and removes the data directory. */
  close(): Promise<void>;
}

/**
 * A throwaway database for one benchmark run (the in-process benchmarks: api, extensions,
 * events): a fresh database named `helpdesk_bench_<random>` on the server of BENCH_DATABASE_URL
 * (default the local one), migrated, with a data directory of its own and one `bench` tenant.
 * Rate limits are lifted; `env` adds configuration. Dropped again by `close()`, also when the
 * set-up itself fails.
 */
export async function scratchDatabase(options: { env?: Record<string, string>; poolMax?: number } = {}): Promise<ScratchDatabase> {
  const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
  const name = `helpdesk_bench_${randomBytes(4).toString('hex')}`;
  const admin = createDb(adminUrl, { max: 1 });
  await admin.raw(`create database ${name}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'helpdesk-bench-'));
  const config = { ...loadConfig({ HELPDESK_DATA_DIR: dataDir, HELPDESK_RATE_LIMIT_PER_MIN: '100000000', ...options.env }), logLevel: 'silent' };
  const deps = createDeps(config, withDatabase(adminUrl, name), { log: createLogger('silent'), poolMax: options.poolMax ?? 20 });
  const close = async (): Promise<void> => {
    await closeDeps(deps);
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await migrateLatest(deps.db);
    const tenant = await createTenant(deps, { slug: 'bench', name: 'Bench', adminEmail: 'admin@bench.example.com', adminPassword: BENCH_PASSWORD }, CLI_ACTOR, new Date());
    return { deps, dataDir, tenant, close };
  } catch (error) {
    await close();
    throw error;
  }
}
