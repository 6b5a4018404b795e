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
import { Pool } from 'undici';
import { buildApp } from '../daemon/app.js';
import { BENCH_PASSWORD, scratchDatabase } from './shared/scratch.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);

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
  const scratch = await scratchDatabase();
  const { deps, tenant: created } = scratch;
  const password = BENCH_PASSWORD;
  try {
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
    await scratch.close();
  }
}

await main();
