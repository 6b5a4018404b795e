/**
 * osTicket import benchmark (issue 13): generates a synthetic osTicket database in the local MariaDB
 * (the v1.18.1 schema and sample from shared/data/osticket plus BENCH_TICKETS tickets with five thread
 * entries each, made with MariaDB's sequence engine), imports it into a fresh PostgreSQL database
 * and prints tickets per second. Both databases are dropped at the end.
 *
 *   node --import tsx bench/osticket-import.ts                   # 100,000 tickets, 500,000 entries
 *   BENCH_TICKETS=5000 node --import tsx bench/osticket-import.ts
 *   BENCH_DATABASE_URL=postgres://… OSTICKET_DATA=…/shared/data/osticket …
 *   BENCH_PARALLEL=1 BENCH_BATCH=500 BENCH_ENTRY_BATCH=2000 …   # the importer's width and batch sizes
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/core/config.js';
import { CLI_ACTOR } from '../src/core/context.js';
import { createDeps, closeDeps } from '../src/core/deps.js';
import { createLogger } from '../src/core/logging.js';
import { createDb, withDatabase } from '../src/db/connection.js';
import { migrateLatest } from '../src/db/migrations.js';
import { createTenant } from '../src/tenants/service.js';
import { runLegacyImport } from '../src/legacy-import/writer.js';

const tickets = Number(process.env.BENCH_TICKETS ?? 100_000);
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const mariaHost = process.env.BENCH_MARIADB_HOST ?? '127.0.0.1';
const data = process.env.OSTICKET_DATA ?? ['../../shared/data/osticket', '../../../shared/data/osticket']
  .map((rel) => new URL(rel, import.meta.url).pathname).find((dir) => existsSync(dir));

function maria(db: string, sql: string): void {
  execFileSync('mariadb', ['-h', mariaHost, '-u', 'root', db], { input: sql, stdio: ['pipe', 'inherit', 'inherit'] });
}

function generate(db: string): void {
  if (!data) throw new Error('set OSTICKET_DATA to the shared/data/osticket directory');
  execFileSync(join(data, 'load-into-mariadb.sh'), [db, '-h', mariaHost, '-u', 'root'], { stdio: 'ignore' });
  const users = Math.max(10, Math.floor(tickets / 100));
  maria(db, `SET SESSION sql_mode='';
    INSERT INTO ost_user (id, org_id, default_email_id, status, name, created, updated)
      SELECT 1000 + seq, 0, 1000 + seq, 0, CONCAT('Bench User ', seq), '2024-01-01 10:00:00', '2024-01-01 10:00:00' FROM seq_1_to_${users};
    INSERT INTO ost_user_email (id, user_id, flags, address)
      SELECT 1000 + seq, 1000 + seq, 0, CONCAT('bench', seq, '@bench.example') FROM seq_1_to_${users};
    INSERT INTO ost_ticket (ticket_id, number, user_id, status_id, dept_id, sla_id, topic_id, staff_id, team_id, source, created, updated, lastupdate)
      SELECT 1000 + seq, 1000000 + seq, 1001 + (seq MOD ${users}), 1 + (seq MOD 3), 1 + (seq MOD 2), 1, 1, seq MOD 4, 0,
             ELT(1 + (seq MOD 4), 'Web', 'Email', 'Phone', 'API'),
             '2024-01-02 10:00:00' + INTERVAL seq MINUTE, '2024-01-03 10:00:00' + INTERVAL seq MINUTE, '2024-01-03 10:00:00' + INTERVAL seq MINUTE
        FROM seq_1_to_${tickets};
    INSERT INTO ost_ticket__cdata (ticket_id, subject, priority)
      SELECT 1000 + seq, CONCAT('Synthetic ticket ', seq, ' — überprüfen'), 1 + (seq MOD 4) FROM seq_1_to_${tickets};
    INSERT INTO ost_thread (id, object_id, object_type, created)
      SELECT 1000 + seq, 1000 + seq, 'T', '2024-01-02 10:00:00' + INTERVAL seq MINUTE FROM seq_1_to_${tickets};
    INSERT INTO ost_thread_entry (id, pid, thread_id, staff_id, user_id, type, flags, poster, body, format, created, updated)
      SELECT 1000 + seq, 0, 1000 + ((seq - 1) DIV 5) + 1,
             IF((seq MOD 5) IN (2, 4), 2, 0), IF((seq MOD 5) IN (2, 4), 0, 1001 + (((seq - 1) DIV 5 + 1) MOD ${users})),
             ELT(1 + (seq MOD 5), 'N', 'M', 'R', 'M', 'R'), 0, 'Bench poster',
             CONCAT('<p>Thread entry ', seq, ' of a synthetic ticket.</p>'), 'html',
             '2024-01-02 10:00:00' + INTERVAL seq SECOND, '0000-00-00 00:00:00'
        FROM seq_1_to_${tickets * 5};`);
}

async function main(): Promise<void> {
  const suffix = randomBytes(4).toString('hex');
  const source = `helpdesk_bench_ost_${suffix}`;
  const target = `helpdesk_bench_${suffix}`;
  const admin = createDb(adminUrl, { max: 1 });
  const dataDir = mkdtempSync(join(tmpdir(), 'helpdesk-bench-'));
  await admin.raw(`create database ${target}`);
  const config = { ...loadConfig({ HELPDESK_DATA_DIR: dataDir }), logLevel: 'silent' };
  const deps = createDeps(config, withDatabase(adminUrl, target), { log: createLogger('silent'), poolMax: 4 });
  try {
    let started = Date.now();
    generate(source);
    console.log(`generated ${tickets} tickets, ${tickets * 5} thread entries in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await migrateLatest(deps.db);
    const created = await createTenant(deps, { slug: 'bench', name: 'Bench', adminEmail: 'admin@bench.example.com', adminPassword: 'benchmark password 123' }, CLI_ACTOR, new Date());
    started = Date.now();
    let last = 0;
    let phase = '';
    let phaseStarted = started;
    const phases: Record<string, number> = {};
    const result = await runLegacyImport(deps, created.tenant.id, CLI_ACTOR, new Date(), {
      source: `mysql://root@${mariaHost}/${source}`,
      batchSize: Number(process.env.BENCH_BATCH ?? 500),
      entryBatchSize: Number(process.env.BENCH_ENTRY_BATCH ?? 2000),
      ...(process.env.BENCH_PARALLEL ? { parallel: Number(process.env.BENCH_PARALLEL) } : {}),
      onProgress: (current, so) => {
        if (current !== phase) {
          if (phase) phases[phase] = (Date.now() - phaseStarted) / 1000;
          phase = current;
          phaseStarted = Date.now();
        }
        if (Date.now() - last < 5000) return;
        last = Date.now();
        console.log(`  ${current}: ${so.counts.tickets} tickets, ${so.counts.messages + so.counts.notes} entries, ${((Date.now() - started) / 1000).toFixed(0)} s`);
      },
    });
    const seconds = (Date.now() - started) / 1000;
    if (phase) phases[phase] = (Date.now() - phaseStarted) / 1000;
    console.log(`seconds per phase: ${JSON.stringify(phases)}`);
    console.log(JSON.stringify({ counts: result.counts, errors: result.errors.length }));
    console.log(`imported in ${seconds.toFixed(1)} s: ${(result.counts.tickets / seconds).toFixed(0)} tickets/s (with their thread entries)`);
  } finally {
    await closeDeps(deps);
    await admin.raw(`drop database if exists ${target} with (force)`);
    await admin.destroy();
    execFileSync('mariadb', ['-h', mariaHost, '-u', 'root', '-e', `DROP DATABASE IF EXISTS \`${source}\``]);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
