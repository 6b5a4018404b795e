/**
 * API throughput benchmark: starts the real daemon (app + PostgreSQL) on loopback and drives it with
 * undici for a fixed time per scenario, printing requests/s and latency percentiles.
 *
 *   npm run bench                      # uses the local PostgreSQL on 127.0.0.1:5432
 *   BENCH_DATABASE_URL=postgres://… npm run bench
 *   BENCH_SECONDS=10 BENCH_CONCURRENCY=64 npm run bench
 *
 * Scenarios: an anonymous liveness probe (pipeline overhead), an authenticated profile read (token
 * lookup + one query), a paged user list, and a login (Argon2id verification dominates by design).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { loadConfig } from '../src/core/config.js';
import { CLI_ACTOR } from '../src/core/context.js';
import { createDeps, closeDeps } from '../src/core/deps.js';
import { createLogger } from '../src/core/logging.js';
import { createDb, withDatabase } from '../src/db/connection.js';
import { migrateLatest } from '../src/db/migrations.js';
import { createTenant } from '../src/tenants/service.js';
import { buildApp } from '../daemon/app.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';

interface Scenario {
  name: string;
  concurrency?: number;
  request: () => { method: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: string };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function drive(pool: Pool, scenario: Scenario): Promise<void> {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = Date.now() + seconds * 1000;
  const worker = async () => {
    while (Date.now() < deadline) {
      const req = scenario.request();
      const started = process.hrtime.bigint();
      const res = await pool.request({ method: req.method, path: req.path, headers: req.headers, body: req.body });
      await res.body.dump();
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (res.statusCode >= 400) errors++;
    }
  };
  await Promise.all(Array.from({ length: scenario.concurrency ?? concurrency }, worker));
  latencies.sort((a, b) => a - b);
  const rps = latencies.length / seconds;
  console.log(
    `${scenario.name.padEnd(28)} ${rps.toFixed(0).padStart(7)} req/s   p50 ${percentile(latencies, 50).toFixed(1).padStart(6)} ms   ` +
      `p99 ${percentile(latencies, 99).toFixed(1).padStart(6)} ms   errors ${errors}`,
  );
}

async function main(): Promise<void> {
  const name = `helpdesk_bench_${randomBytes(4).toString('hex')}`;
  const admin = createDb(adminUrl, { max: 1 });
  await admin.raw(`create database ${name}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'helpdesk-bench-'));
  const config = { ...loadConfig({ HELPDESK_DATA_DIR: dataDir, HELPDESK_RATE_LIMIT_PER_MIN: '100000000' }), logLevel: 'silent' };
  const deps = createDeps(config, withDatabase(adminUrl, name), { log: createLogger('silent'), poolMax: 20 });
  try {
    await migrateLatest(deps.db);
    const password = 'benchmark password 123';
    const created = await createTenant(deps, { slug: 'bench', name: 'Bench', adminEmail: 'admin@bench.example.com', adminPassword: password }, CLI_ACTOR, new Date());
    const app = await buildApp(deps);
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const pool = new Pool(address, { connections: concurrency });
    const auth = { authorization: `Bearer ${created.api_key}` };
    const csrf = (await (await pool.request({ method: 'GET', path: '/api/v1/auth/csrf', headers: { 'x-helpdesk-tenant': 'bench' } })).body.json()) as { csrf_token: string };

    console.log(`Helpdesk API benchmark: ${seconds} s per scenario, ${concurrency} concurrent connections, Node ${process.version}`);
    await drive(pool, { name: 'GET /healthz (anonymous)', request: () => ({ method: 'GET', path: '/api/v1/healthz' }) });
    await drive(pool, { name: 'GET /auth/me (API key)', request: () => ({ method: 'GET', path: '/api/v1/auth/me', headers: auth }) });
    await drive(pool, { name: 'GET /users?page_size=20', request: () => ({ method: 'GET', path: '/api/v1/users?page_size=20', headers: auth }) });
    await drive(pool, {
      name: 'POST /auth/login (Argon2id)',
      concurrency: 4,
      request: () => ({
        method: 'POST', path: '/api/v1/auth/login',
        headers: { 'content-type': 'application/json', 'x-helpdesk-tenant': 'bench', 'x-csrf-token': csrf.csrf_token },
        body: JSON.stringify({ email: 'admin@bench.example.com', password }),
      }),
    });
    await pool.close();
    await app.close();
  } finally {
    await closeDeps(deps);
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
