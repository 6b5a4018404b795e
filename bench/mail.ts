/**
 * Email channel benchmark: inbound messages per second through the inbound route into tickets,
 * and notification mails per second from the outbox to a local SMTP sink.
 *
 *   node --import tsx bench/mail.ts                 # uses the local PostgreSQL on 127.0.0.1:5432
 *   BENCH_DATABASE_URL=postgres://… BENCH_SECONDS=10 BENCH_CONCURRENCY=16 node --import tsx bench/mail.ts
 *
 * 1. Inbound: each request is a new message from a new sender (a new customer, a new ticket, its
 *    confirmation row in the outbox): the whole path of a first contact. The instance has no SMTP
 *    during this phase, so the confirmations wait in the outbox.
 * 2. Notifications: SMTP is switched on (a local smtp-server sink on loopback) and the mail-send
 *    sender drains the outbox the first phase filled; mails per second as the sink received them.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { Pool } from 'undici';
import { loadConfig } from '../src/core/config.js';
import { CLI_ACTOR } from '../src/core/context.js';
import { createDeps, closeDeps } from '../src/core/deps.js';
import { createLogger } from '../src/core/logging.js';
import { createDb, withDatabase } from '../src/db/connection.js';
import { migrateLatest } from '../src/db/migrations.js';
import { createTenant } from '../src/tenants/service.js';
import { inboundTokenFor } from '../src/mail/inbound-token.js';
import { sendDueNotifications } from '../src/mail/send.js';
import { buildApp } from '../daemon/app.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

function message(n: number): string {
  return [
    `From: "Customer ${n}" <customer-${n}-${randomBytes(3).toString('hex')}@bench.example>`,
    'To: support@bench.example',
    `Subject: Benchmark request ${n}`,
    `Message-ID: <bench.${n}.${randomBytes(6).toString('hex')}@bench.example>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain; charset=utf-8',
    '',
    `My printer ${n} does not print. It shows error E${n % 97}.`,
    '--b',
    'Content-Type: text/html; charset=utf-8',
    '',
    `<p>My printer <b>${n}</b> does not print. It shows error E${n % 97}.</p>`,
    '--b--',
    '',
  ].join('\r\n');
}

async function main(): Promise<void> {
  const name = `helpdesk_bench_${randomBytes(4).toString('hex')}`;
  const admin = createDb(adminUrl, { max: 1 });
  await admin.raw(`create database ${name}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'helpdesk-bench-'));
  let received = 0;
  const sink = new SMTPServer({
    authOptional: true, disabledCommands: ['STARTTLS'], logger: false,
    onData(stream, _session, callback) {
      stream.on('data', () => {});
      stream.on('end', () => { received++; callback(); });
    },
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const smtpUrl = `smtp://127.0.0.1:${(sink.server.address() as AddressInfo).port}?pool=true&maxConnections=8`;
  const config = { ...loadConfig({ HELPDESK_DATA_DIR: dataDir, HELPDESK_RATE_LIMIT_PER_MIN: '100000000' }), logLevel: 'silent', smtpUrl: null as string | null };
  const deps = createDeps(config, withDatabase(adminUrl, name), { log: createLogger('silent'), poolMax: 20 });
  try {
    await migrateLatest(deps.db);
    const created = await createTenant(deps, { slug: 'bench', name: 'Bench', adminEmail: 'admin@bench.example.com', adminPassword: 'benchmark password 123' }, CLI_ACTOR, new Date());
    const app = await buildApp(deps);
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const pool = new Pool(address, { connections: concurrency });
    const path = `/api/v1/integrations/email/inbound/${inboundTokenFor(deps.box, created.tenant.id)}`;
    console.log(`Helpdesk mail benchmark: ${seconds} s inbound, ${concurrency} concurrent connections, Node ${process.version}`);

    const latencies: number[] = [];
    let errors = 0;
    let n = 0;
    const deadline = Date.now() + seconds * 1000;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        const started = process.hrtime.bigint();
        const res = await pool.request({ method: 'POST', path, headers: { 'content-type': 'message/rfc822' }, body: message(++n) });
        const answer = await res.body.json() as { created_ticket?: boolean };
        latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
        if (res.statusCode !== 202 || !answer.created_ticket) errors++;
      }
    }));
    latencies.sort((a, b) => a - b);
    console.log(`${'inbound mail → new ticket'.padEnd(30)} ${(latencies.length / seconds).toFixed(0).padStart(6)} msg/s   p50 ${percentile(latencies, 50).toFixed(1).padStart(6)} ms   p99 ${percentile(latencies, 99).toFixed(1).padStart(6)} ms   errors ${errors}`);

    config.smtpUrl = smtpUrl;
    const queued = Number((await deps.db('notifications').where({ status: 'pending' }).count({ n: '*' }))[0]!.n);
    const started = Date.now();
    const later = new Date(Date.now() + 3_600_000);
    const result = await sendDueNotifications(deps, later);
    const elapsed = (Date.now() - started) / 1000;
    console.log(`${'notification mail → SMTP sink'.padEnd(30)} ${(received / elapsed).toFixed(0).padStart(6)} mail/s   ${received} of ${queued} queued in ${elapsed.toFixed(1)} s   not sent ${result.retrying + result.failed}`);
    await pool.close();
    await app.close();
  } finally {
    await closeDeps(deps);
    await new Promise<void>((resolve) => sink.close(() => resolve()));
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
