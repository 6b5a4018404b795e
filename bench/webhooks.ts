/**
 * Webhook delivery benchmark: a real PostgreSQL database, the real outbox and dispatcher, and a
 * local HTTP receiver on loopback (node:http, answering 200 at once).
 *
 *   node --import tsx bench/webhooks.ts
 *   BENCH_DATABASE_URL=postgres://… BENCH_DELIVERIES=20000 BENCH_RATE=200 node --import tsx bench/webhooks.ts
 *
 * 1. Throughput: BENCH_DELIVERIES events are committed first (100 per transaction, two endpoints
 *    of one tenant each subscribed to half of them), then one dispatcher drains the backlog:
 *    deliveries per second, claim + send + record included.
 * 2. Commit-to-delivery latency: the serve loop (LISTEN/NOTIFY) runs while events are committed one
 *    per transaction at BENCH_RATE per second; the time from each commit returning to the receiver
 *    reading the request, p50 and p99.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/core/config.js';
import { CLI_ACTOR, SYSTEM_ACTOR } from '../src/core/context.js';
import { createDeps, closeDeps } from '../src/core/deps.js';
import { createLogger } from '../src/core/logging.js';
import { createDb, withDatabase } from '../src/db/connection.js';
import { migrateLatest } from '../src/db/migrations.js';
import { inTransaction } from '../src/db/transaction.js';
import { createTenant } from '../src/tenants/service.js';
import { emitTicketChange } from '../src/events/emit/ticket-change.js';
import { createEndpoint } from '../src/webhooks/endpoints.js';
import { Dispatcher } from '../src/webhooks/dispatcher.js';
import { startDispatchLoop } from '../src/webhooks/dispatch-loop.js';
import { wireDomain } from '../src/wiring.js';

const total = Number(process.env.BENCH_DELIVERIES ?? 10_000);
const rate = Number(process.env.BENCH_RATE ?? 200);
const latencySeconds = Number(process.env.BENCH_SECONDS ?? 5);
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function main(): Promise<void> {
  wireDomain();
  const name = `helpdesk_bench_${randomBytes(4).toString('hex')}`;
  const admin = createDb(adminUrl, { max: 1 });
  await admin.raw(`create database ${name}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'helpdesk-bench-'));
  const config = { ...loadConfig({ HELPDESK_DATA_DIR: dataDir, HELPDESK_WEBHOOKS_ALLOW_PRIVATE: '1' }), logLevel: 'silent' };
  const databaseUrl = withDatabase(adminUrl, name);
  const deps = createDeps(config, databaseUrl, { log: createLogger('silent'), poolMax: 20 });

  const arrivals = new Map<string, number>();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const { data } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { to: string } };
      arrivals.set(data.to, at);
      res.writeHead(200).end();
    });
  });
  receiver.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;

  try {
    await migrateLatest(deps.db);
    const created = await createTenant(deps, { slug: 'bench', name: 'Bench', adminEmail: 'admin@bench.example.com', adminPassword: 'benchmark password 123' }, CLI_ACTOR, new Date());
    const tenantId = created.tenant.id;
    await inTransaction(deps, { tenantId, actor: CLI_ACTOR, now: new Date() }, async (ctx) => {
      await createEndpoint(ctx, { name: 'bench A', url: `http://127.0.0.1:${port}/a`, events: ['ticket.status_changed'] });
      await createEndpoint(ctx, { name: 'bench B', url: `http://localhost:${port}/b`, events: ['ticket.priority_changed'] });
    });
    const ticketId = created.admin.id;

    console.log(`Webhook benchmark: Node ${process.version}, ${total} deliveries, then ${latencySeconds} s at ${rate} commits/s`);

    // 1. Throughput over a committed backlog.
    for (let i = 0; i < total; i += 100) {
      await inTransaction(deps, { tenantId, actor: SYSTEM_ACTOR, now: new Date() }, async (ctx) => {
        for (let j = i; j < Math.min(total, i + 100); j++) {
          await emitTicketChange(ctx, j % 2 ? 'ticket.priority_changed' : 'ticket.status_changed', { ticketId, from: 'x', to: `t${j}` });
        }
      });
    }
    if (process.env.BENCH_ANALYZE) await deps.db.raw('analyze');
    const dispatcher = new Dispatcher(deps, { concurrency: Number(process.env.BENCH_CONCURRENCY ?? 64), perEndpoint: Number(process.env.BENCH_PER_ENDPOINT ?? 32), batchSize: Number(process.env.BENCH_BATCH ?? 100) });
    const started = performance.now();
    const totals = await dispatcher.drain(() => new Date());
    const seconds = (performance.now() - started) / 1000;
    await dispatcher.close();
    console.log(`throughput        ${(totals.delivered / seconds).toFixed(0).padStart(6)} deliveries/s   (${totals.delivered} delivered, ${totals.failed} failed in ${seconds.toFixed(2)} s)`);

    // 2. Commit-to-delivery latency through LISTEN/NOTIFY.
    const loop = await startDispatchLoop(deps, { databaseUrl, pollMs: 60_000, concurrency: 64, perEndpoint: 32 });
    const commits = new Map<string, number>();
    const count = rate * latencySeconds;
    const interval = 1000 / rate;
    const begin = performance.now();
    for (let i = 0; i < count; i++) {
      const due = begin + i * interval;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const key = `l${i}`;
      await inTransaction(deps, { tenantId, actor: SYSTEM_ACTOR, now: new Date() }, (ctx) => emitTicketChange(ctx, 'ticket.status_changed', { ticketId, from: 'x', to: key }));
      commits.set(key, performance.now());
    }
    const deadline = performance.now() + 10_000;
    while ([...commits.keys()].some((k) => !arrivals.has(k)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await loop.stop();
    const latencies = [...commits].filter(([k]) => arrivals.has(k)).map(([k, c]) => Math.max(0, arrivals.get(k)! - c)).sort((a, b) => a - b);
    console.log(`commit→delivery   p50 ${percentile(latencies, 50).toFixed(1).padStart(6)} ms   p99 ${percentile(latencies, 99).toFixed(1).padStart(6)} ms   (${latencies.length} of ${count} delivered)`);
  } finally {
    receiver.closeAllConnections();
    receiver.close();
    await closeDeps(deps);
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
