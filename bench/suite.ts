/**
 * The benchmark suite (`npm run bench`, docs/performance.md): seeds a tenant with a million tickets
 * in a dedicated PostgreSQL database (kept between runs), starts the daemon as a real child process
 * (`helpdesk serve` from dist/), drives it with autocannon over loopback, checks every budget of
 * the performance issue and prints one table; the figures also go to bench/results.json.
 *
 *   npm run bench                       # 1,000,000 tickets, budgets enforced (exit 1 if one fails)
 *   npm run bench -- --quick            # 3,000 tickets, 2 s per scenario, no budgets (CI)
 *   npm run bench -- --tickets 100000   # another size (own database), budgets shown
 *   npm run bench -- --reseed           # drop the kept database and seed again
 *   npm run bench -- --only list,deep    # just these scenarios (and healthz)
 *   BENCH_DATABASE_URL=postgres://…/postgres BENCH_SECONDS=10 BENCH_WARMUP=10 BENCH_RESULTS=out.json npm run bench
 *   BENCH_DAEMON_NODE_ARGS="--cpu-prof --cpu-prof-dir=prof" npm run bench -- --only me   # profile the daemon
 *   BENCH_RATE=300 npm run bench -- --only create   # a fixed request rate: CPU per request below saturation
 *
 * --quick fails only when the suite crashes or a request errors, never on timing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import autocannon, { type Request as CannonRequest } from 'autocannon';
import { loadConfig } from '../src/core/config.js';
import { createDeps, closeDeps } from '../src/core/deps.js';
import { createLogger } from '../src/core/logging.js';
import { createDb, withDatabase } from '../src/db/connection.js';
import { migrateLatest } from '../src/db/migrations.js';
import { wireDomain } from '../src/wiring.js';
import { benchApiKey, readSeedInfo, seed, suiteDatabaseName } from './suite/seed.js';
import { cpuPerRequest, isLocalDatabase, sampleCpu, type CpuPerRequest } from './suite/cpu.js';
import { sampleSchedule, scheduleShares, type ScheduleShares } from './suite/scheduling.js';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const ticketsArg = args.indexOf('--tickets');
const tickets = ticketsArg >= 0 ? Number(args[ticketsArg + 1]) : quick ? 3_000 : 1_000_000;
const seconds = Number(process.env.BENCH_SECONDS ?? (quick ? 2 : 10));
// Unmeasured load before each scenario: V8 compiles a write path for its first ~10 s of load, and a
// daemon runs for days (docs/performance.md, "A steady state before each scenario").
const warmup = quick ? 0 : Number(process.env.BENCH_WARMUP ?? 10);
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const PAGE_SIZE = 25;
const DEEP_PAGES = 5_000;
const SECRET_KEY = 'b'.repeat(64);
const resultsPath = process.env.BENCH_RESULTS ?? join(root, 'bench/results.json');
// BENCH_RATE: requests per second across all connections instead of as many as the daemon answers.
// Below saturation the CPU per request moves far less between runs than at full load (the cores
// are not fought over), so a change to a path's cost shows in a single run.
const rate = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;
// --only list,create: run just these scenarios (and the healthz baseline), to iterate on one path.
const onlyArg = args.indexOf('--only');
const only = onlyArg >= 0 ? new Set(args[onlyArg + 1]!.split(',')) : null;

interface Figure {
  name: string;
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  budget: string;
  met: boolean | null;
  ratio: number | null;
  /** CPU milliseconds per request of the measured run (bench/suite/cpu.ts); null where not readable. */
  cpu: CpuPerRequest | null;
  /** Shares of the measured run's wall time: the daemon's thread running, waiting for a core; the machine idle (bench/suite/scheduling.ts). */
  schedule: ScheduleShares | null;
  /** The daemon's peak RSS so far, read when the scenario ended: which scenario raised it. */
  peak_rss_mb: number | null;
}

const percent = (share: number | null) => (share === null ? 'n/a' : `${Math.round(share * 100)} %`);

/** The daemon's thread and the machine over the run; empty where /proc is not readable. */
function describeSchedule(s: ScheduleShares): string {
  if (s.daemon_thread_running === null && s.machine_idle === null) return '';
  return `\n    daemon thread: running ${percent(s.daemon_thread_running)}, waiting for a core ${percent(s.daemon_thread_waiting)}; machine idle ${percent(s.machine_idle)}`;
}

function log(message: string) {
  console.log(message);
}

/** One public reply to each ticket, 16 at a time: the replies start the tickets' SLA clocks. */
async function startClocks(url: string, auth: Record<string, string>, ticketIds: string[]): Promise<void> {
  const started = Date.now();
  const queue = [...ticketIds];
  const body = JSON.stringify({ body: 'Thanks, we have your request and are looking into it.', is_private: false });
  const worker = async () => {
    for (let id = queue.pop(); id; id = queue.pop()) {
      const answer = await fetch(`${url}/api/v1/tickets/${id}/messages`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body });
      if (answer.status !== 201) throw new Error(`starting the SLA clock of ticket ${id} answered ${answer.status}: ${await answer.text()}`);
      await answer.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  log(`  started the SLA clocks of ${ticketIds.length.toLocaleString('en')} seeded tickets with one reply each (${Math.round((Date.now() - started) / 1000)} s)`);
}

async function startDaemon(databaseUrl: string, dataDir: string): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  let stderr = '';
  // BENCH_DAEMON_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=prof`): node flags for the daemon only,
  // to profile it under the load (the profile is written when it stops).
  const nodeArgs = (process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, join(root, 'bin/run.js'), 'serve', '--port', '0', '--no-jobs', '--json'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      HELPDESK_DATA_DIR: dataDir,
      HELPDESK_SECRET_KEY: SECRET_KEY,
      HELPDESK_RATE_LIMIT_PER_MIN: '1000000000',
      HELPDESK_WEBHOOKS_ALLOW_PRIVATE: '1',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-20_000);
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the daemon did not start within 60 s:\n${stderr}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      try {
        const announced = JSON.parse(out) as { url: string };
        clearTimeout(timer);
        resolve(announced.url);
      } catch {
        // not the whole document yet
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the daemon exited (${code}) during start-up:\n${stderr}`));
    });
  });
  return { child, url, stderr: () => stderr };
}

/** Peak resident set size of a process in MB (VmHWM: the kernel's own high-water mark). */
function peakRssMb(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Number(kb) / 1024 : null;
  } catch {
    return null; // not Linux
  }
}

async function main(): Promise<void> {
  wireDomain();
  const name = quick ? `helpdesk_bench_quick_${randomBytes(4).toString('hex')}` : suiteDatabaseName(tickets);
  const admin = createDb(adminUrl, { max: 1 });
  const databaseUrl = withDatabase(adminUrl, name);
  const dataDir = mkdtempSync(join(tmpdir(), 'helpdesk-bench-'));
  const config = { ...loadConfig({ HELPDESK_DATA_DIR: dataDir, HELPDESK_SECRET_KEY: SECRET_KEY, HELPDESK_WEBHOOKS_ALLOW_PRIVATE: '1' }), logLevel: 'silent' };
  let daemon: Awaited<ReturnType<typeof startDaemon>> | null = null;
  let deps: ReturnType<typeof createDeps> | null = null;
  const started = Date.now();
  try {
    if (!args.includes('--no-build')) {
      log('Building dist/ (tsc) ...');
      // From empty: a file left from a source since removed (a migration above all) would run too.
      rmSync(join(root, 'dist'), { recursive: true, force: true });
      const build = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
      if (build.status !== 0) throw new Error('the build failed');
    }
    const exists = (await admin.raw('select 1 from pg_database where datname = ?', [name])).rows.length > 0;
    if (exists && args.includes('--reseed')) await admin.raw(`drop database ${name} with (force)`);
    if (!exists || args.includes('--reseed')) await admin.raw(`create database ${name}`);
    deps = createDeps(config, databaseUrl, { log: createLogger('silent'), poolMax: 4 });
    await migrateLatest(deps.db);
    let info = await readSeedInfo(deps.db);
    if (info && info.tickets !== tickets) info = null;
    if (!info) {
      if (exists && !args.includes('--reseed')) {
        // A half-finished seed (interrupted run): start over on an empty database.
        await closeDeps(deps);
        await admin.raw(`drop database ${name} with (force)`);
        await admin.raw(`create database ${name}`);
        deps = createDeps(config, databaseUrl, { log: createLogger('silent'), poolMax: 4 });
        await migrateLatest(deps.db);
      }
      log(`Seeding ${tickets.toLocaleString('en')} tickets into ${name} ...`);
      info = await seed(deps, tickets);
    } else {
      log(`Reusing ${name}: ${info.tickets.toLocaleString('en')} tickets seeded ${info.seeded_at} in ${info.seed_seconds} s`);
    }
    // Earlier runs left dead rows behind (the publisher numbers events by UPDATE, the SLA engine
    // rewrites each new ticket, replies update theirs), and dead index entries slow the very paths
    // measured: create fell from ~195 to ~155/s over a dozen runs on a server without autovacuum,
    // as CI servers often are. Vacuum what the scenarios write, as autovacuum would between runs.
    const vacuumStarted = Date.now();
    await deps.db.raw('VACUUM (ANALYZE) tickets, messages, events, webhook_deliveries, notifications, mail_message_ids, report_rollup_dirty, report_reply_gaps');
    // A seed writes gigabytes of WAL, so the server owes a checkpoint (max_wal_size); taken in the
    // middle of a scenario, it makes every page that scenario touches write a full-page image
    // first, and on a fresh seed the reply scenario ran at half its speed. Each run starts right
    // after one instead, as a live server is at some point of its checkpoint cycle anyway.
    await deps.db.raw('CHECKPOINT');
    log(`  vacuumed the written tables and took a checkpoint (${Math.round((Date.now() - vacuumStarted) / 1000)} s)`);
    const apiKey = await benchApiKey(deps, info);

    // The requests' inputs, read once: the filter of the list scenarios and its deep cursor, ticket
    // ids to get, open tickets to reply to, customers to open tickets for.
    const db = deps.db;
    const ids = (key: string, table: string) => db(table).where({ tenant_id: info!.tenant_id, key }).first('id').then((r: { id: string }) => r.id);
    const openId = await ids('open', 'statuses');
    const normalId = await ids('normal', 'priorities');
    const filtered = Number((await db('tickets').where({ tenant_id: info.tenant_id, status_id: openId, priority_id: normalId }).count({ n: '*' }).first())!.n);
    const deepOffset = Math.max(1, Math.min(DEEP_PAGES * PAGE_SIZE, filtered - PAGE_SIZE));
    const deepRow = await db('tickets').where({ tenant_id: info.tenant_id, status_id: openId, priority_id: normalId })
      .orderBy([{ column: 'updated_at', order: 'desc' }, { column: 'id', order: 'desc' }]).offset(deepOffset - 1).limit(1)
      .first('id', db.raw(`(extract(epoch from updated_at) * 1000000)::bigint::text as k`));
    const deepCursor = Buffer.from(JSON.stringify({ s: 'updated_at', d: 'desc', k: deepRow.k, i: deepRow.id })).toString('base64url');
    const sample = async (where: Record<string, unknown>, n: number) =>
      (await db('tickets').where({ tenant_id: info!.tenant_id, ...where }).whereRaw('ticket_number % ? = 0', [Math.max(1, Math.floor(tickets / (n * 4)))])
        .limit(n).select('id')).map((r: { id: string }) => r.id);
    const ticketIds = await sample({}, 2000);
    const openIds = await sample({ status_id: openId }, 2000);
    const customerIds = (await db('users').where({ tenant_id: info.tenant_id, role: 'customer' }).limit(2000).select('id')).map((r: { id: string }) => r.id);
    // The seed writes tickets as an import does, without SLA state: a ticket's clock starts at its
    // next change (docs/import.md). The first reply to such a ticket replays up to a year of the
    // clock and announces its warnings and breaches (events, deliveries, mails to the admins), so a
    // reply run's figure depended on how many runs had replied before it. The tickets replied to
    // get one reply each below, before the first scenario, so that every run measures the replies of
    // a desk in use.
    const unclocked = quick ? [] : (await db('tickets').where({ tenant_id: info.tenant_id }).whereIn('id', openIds).whereNull('sla_state').select('id'))
      .map((r: { id: string }) => r.id);
    await closeDeps(deps);
    deps = null;

    const auth = { authorization: `Bearer ${apiKey}` };
    const pick = <T>(list: T[]) => list[Math.floor(Math.random() * list.length)]!;
    if (unclocked.length) {
      // The clocks are started by a daemon of their own, stopped before the scenarios. Its replays
      // leave V8 with a larger heap limit, and the same scenarios then let ~150 MB more garbage
      // build up between full collections (peak RSS 331 MB against 233 MB, the live heap 55 MB
      // against 51 MB: docs/performance.md), so every run now measures a daemon freshly started.
      const starter = await startDaemon(databaseUrl, dataDir);
      try {
        await startClocks(starter.url, auth, unclocked);
        log(`  (that daemon's peak RSS: ${peakRssMb(starter.child.pid!)?.toFixed(0) ?? 'n/a'} MB)`);
      } finally {
        starter.child.kill('SIGTERM');
        await new Promise((resolve) => starter.child.once('exit', resolve));
      }
    }
    daemon = await startDaemon(databaseUrl, dataDir);
    const pid = daemon.child.pid!;
    log(`Daemon pid ${pid} on ${daemon.url}; ${seconds} s per scenario${warmup ? ` after ${warmup} s of warm-up` : ''}`);
    const listPath = `/api/v1/tickets?status_id=${openId}&priority_id=${normalId}&sort_by=updated_at&page_size=${PAGE_SIZE}&cursor=`;

    const figures: Figure[] = [];
    const localDatabase = isLocalDatabase(databaseUrl);
    const ms = (value: number | null) => (value === null ? 'n/a' : value.toFixed(2));
    const skipped: Figure = { name: '', connections: 0, rps: 0, p50: 0, p99: 0, requests: 0, errors: 0, budget: '', met: null, ratio: null, cpu: null, schedule: null, peak_rss_mb: null };
    // `plain`: no credential and no body type, as a load balancer's health check asks (with a bearer
    // token even healthz would look the token up, and the baseline would include a database read).
    const run = async (key: string, label: string, connections: number, request: CannonRequest, plain = false): Promise<Figure> => {
      if (only && key !== 'healthz' && !only.has(key)) return { ...skipped, name: label };
      const headers: Record<string, string> = plain ? {} : { ...auth, 'content-type': 'application/json' };
      const options = { url: daemon!.url, connections, headers, requests: [request], timeout: 30, ...(rate && !plain ? { overallRate: rate } : {}) };
      // One request first, checked in full: under --quick on a busy CI machine a scenario may finish
      // few requests (or none) in its seconds; this one proves the path works.
      const first = request.setupRequest ? request.setupRequest({ ...request }) : request;
      const answer = await fetch(daemon!.url + first.path, { method: first.method, headers: options.headers, body: first.body });
      const smokeFailed = answer.status >= 300;
      if (smokeFailed) log(`  ${label}: the first request answered ${answer.status}: ${await answer.text()}`);
      else await answer.arrayBuffer();
      if (warmup) await autocannon({ ...options, duration: warmup });
      const cpuBefore = sampleCpu(pid, localDatabase);
      const scheduleBefore = sampleSchedule(pid);
      const result = await autocannon({ ...options, duration: seconds });
      const schedule = scheduleShares(scheduleBefore, sampleSchedule(pid));
      const cpu = cpuPerRequest(cpuBefore, sampleCpu(pid, localDatabase), result.requests.total);
      const errors = result.errors + result.timeouts + result.non2xx + (smokeFailed ? 1 : 0);
      const figure: Figure = {
        name: label, connections, rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99,
        requests: result.requests.total, errors, budget: '', met: null, ratio: null, cpu, schedule, peak_rss_mb: peakRssMb(pid),
      };
      figures.push(figure);
      log(`  ${label.padEnd(34)} ${String(figure.rps).padStart(6)} req/s  p50 ${String(figure.p50).padStart(4)} ms  p99 ${String(figure.p99).padStart(4)} ms  errors ${errors}${cpu ? `  CPU ms/request: daemon ${ms(cpu.daemon_ms)}, database ${ms(cpu.database_ms)}, load ${ms(cpu.load_generator_ms)}` : ''}${figure.peak_rss_mb === null ? '' : `  peak RSS ${figure.peak_rss_mb.toFixed(0)} MB`}${describeSchedule(schedule)}`);
      if (errors) log(`    status codes: ${JSON.stringify(result.statusCodeStats)}\n${daemon!.stderr().slice(-2000)}`);
      return figure;
    };

    const healthz = await run('healthz', 'GET /healthz', 32, { method: 'GET', path: '/api/v1/healthz' }, true);
    const me = await run('me', 'GET /auth/me', 32, { method: 'GET', path: '/api/v1/auth/me' });
    const list = await run('list', 'ticket list, first page', 32, { method: 'GET', path: listPath });
    const deep = await run('deep', `ticket list, ${deepOffset.toLocaleString('en')} rows deep`, 32, { method: 'GET', path: listPath + deepCursor });
    const get = await run('get', 'GET /tickets/:id', 32, { method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/v1/tickets/${pick(ticketIds)}` }) });
    let created = 0;
    const create = await run('create', 'POST /tickets', 32, {
      method: 'POST',
      setupRequest: (req) => ({
        ...req, path: '/api/v1/tickets',
        body: JSON.stringify({
          subject: `Benchmark ticket ${++created}`, body: 'The export has failed since this morning with an error.',
          requester_id: pick(customerIds), tags: ['bug'], custom_fields: { plan: 'pro', account_ref: `ACC-${created}` },
        }),
      }),
    });
    const reply = await run('reply', 'POST /tickets/:id/messages (public)', 32, {
      method: 'POST',
      setupRequest: (req) => ({
        ...req, path: `/api/v1/tickets/${pick(openIds)}/messages`,
        body: JSON.stringify({ body: 'Thanks for the details; we are on it and will report back within the hour.', is_private: false }),
      }),
    });
    const rss = peakRssMb(pid);

    // Budgets (docs/performance.md); a ratio is the figure over the healthz figure of this run.
    const ratioOf = (f: Figure) => (healthz.rps ? f.rps / healthz.rps : null);
    for (const f of figures) f.ratio = ratioOf(f);
    const budget = (f: Figure, text: string, met: boolean) => {
      f.budget = text;
      f.met = figures.includes(f) ? met : null; // null: not run (--only)
    };
    healthz.budget = 'baseline';
    budget(me, '>= 40% of healthz', (me.ratio ?? 0) >= 0.4);
    budget(list, '>= 1500 req/s, p99 <= 60 ms', list.rps >= 1500 && list.p99 <= 60);
    budget(deep, `p99 <= 1.5 x first page (${(1.5 * list.p99).toFixed(0)} ms)`, deep.p99 <= 1.5 * Math.max(list.p99, 1));
    budget(get, '>= 3000 req/s', get.rps >= 3000);
    budget(create, '>= 600 req/s', create.rps >= 600);
    budget(reply, '>= 400 req/s', reply.rps >= 400);
    const rssFigure = { name: 'daemon peak RSS', budget: '<= 300 MB', value_mb: rss, met: rss === null ? null : rss <= 300 };

    const errorsTotal = figures.reduce((sum, f) => sum + f.errors, 0);
    const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
    log('');
    log(row(['scenario', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'x healthz', 'CPU ms/req daemon', 'database', 'budget', quick ? 'met (not enforced)' : 'met']));
    log(row(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---', '---']));
    for (const f of figures) {
      log(row([f.name, String(f.connections), String(f.rps), String(f.p50), String(f.p99), String(f.errors),
        f.ratio === null ? '' : f.ratio.toFixed(2), f.cpu ? ms(f.cpu.daemon_ms) : '', f.cpu ? ms(f.cpu.database_ms) : '',
        f.budget, f.met === null ? '' : f.met ? 'met' : 'NOT MET']));
    }
    log(row([rssFigure.name, '', '', '', '', '', '', '', '', rssFigure.budget, rss === null ? 'n/a' : `${rss.toFixed(0)} MB: ${rssFigure.met ? 'met' : 'NOT MET'}`]));

    const results = {
      date: new Date().toISOString(), quick, tickets, seconds_per_scenario: seconds, node: process.version,
      cpus: cpus().length, cpu_model: cpus()[0]?.model ?? null, load_average: loadavg(),
      seed: { seeded_at: info.seeded_at, seed_seconds: info.seed_seconds, filtered_tickets: filtered, deep_offset: deepOffset },
      scenarios: figures, rss: rssFigure, errors: errorsTotal, total_seconds: Math.round((Date.now() - started) / 1000),
    };
    writeFileSync(resultsPath, JSON.stringify(results, null, 2) + '\n');
    log(`\nWrote ${process.env.BENCH_RESULTS ?? 'bench/results.json'} (${results.total_seconds} s in all; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')})`);

    if (errorsTotal) {
      log(`${errorsTotal} request(s) failed`);
      process.exitCode = 1;
    } else if (!quick && (figures.some((f) => f.met === false) || rssFigure.met === false)) {
      log('Some budgets are not met');
      process.exitCode = 1;
    }
  } finally {
    if (daemon) {
      daemon.child.kill('SIGTERM');
      await new Promise((resolve) => daemon!.child.once('exit', resolve));
    }
    if (deps) await closeDeps(deps);
    if (quick) await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();

