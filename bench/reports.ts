/**
 * Reports benchmark (CONTRACT §18: every report within 500 ms at a million tickets per tenant).
 *
 *   node --import tsx bench/reports.ts
 *   BENCH_TICKETS=1000000 BENCH_RUNS=5 BENCH_KEEP=1 node --import tsx bench/reports.ts
 *
 * Seeds one tenant by SQL (generate_series) with BENCH_TICKETS tickets spread evenly over the year
 * before 2026-11-27 (so a 30-day window holds about 82,000 of them), about 2.2 public messages per
 * ticket (a tenth of the tickets followed up a day later, a twentieth a week later), SLA outcomes on every ticket (breaches among them, with their breach events), CSAT
 * surveys on a third of the resolved tickets (half of them rated), 20 agents, 5 teams and 4
 * channels; a second tenant holds a tenth as many tickets. Then it asks every report route through
 * the app (inject: routing, access, licence check, validation, serialisation included) for the
 * default 30-day window and for a whole year, BENCH_RUNS times after one warm-up, and prints the
 * median and the slowest answer of each. Before measuring it runs the `report-rollup` job up to
 * the end of the data (the first run rolls the whole history up; later ones only what changed). BENCH_DATABASE_URL names the server (default: local);
 * BENCH_KEEP=1 keeps the database (named helpdesk_bench_reports) and reuses it on the next run;
 * BENCH_ONLY=<regex> measures only the matching report URLs (path and query, e.g. `group_by=hour`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/core/config.js';
import { CLI_ACTOR } from '../src/core/context.js';
import { createDeps, closeDeps } from '../src/core/deps.js';
import { createLogger } from '../src/core/logging.js';
import { uuidv7 } from '../src/core/ids.js';
import { createDb, withDatabase, type Knex } from '../src/db/connection.js';
import { migrateLatest } from '../src/db/migrations.js';
import { createTenant } from '../src/tenants/service.js';
import { buildApp } from '../daemon/app.js';
import { catalog } from '../src/reports/catalog.js';
import { reportRollup } from '../src/reports/rollup.js';

const TICKETS = Number(process.env.BENCH_TICKETS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const KEEP = process.env.BENCH_KEEP === '1';
/** Only the report URLs matching this pattern (e.g. BENCH_ONLY=analytics). */
const ONLY = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null;
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const END = '2026-11-27T00:00:00Z';
const NAME = KEEP ? 'helpdesk_bench_reports' : `helpdesk_bench_reports_${Date.now().toString(36)}`;

/** RFC 3339 text of a timestamptz expression, as the SLA engine stores it in tickets.sla. */
const iso = (expr: string) => `to_char((${expr}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

async function seedTenant(db: Knex, tenantId: string, tickets: number, firstNumber: number): Promise<void> {
  const now = new Date(END);
  const ids = async (table: string, where: Record<string, unknown> = {}) =>
    (await db(table).where({ tenant_id: tenantId, ...where }).select('id')).map((r: { id: string }) => r.id);
  const users = (role: string, n: number, label: string) => Array.from({ length: n }, (_, i) => ({
    tenant_id: tenantId, id: uuidv7(), email: `${label}${i}@${tenantId.slice(0, 8)}.bench.example.com`, name: `${label} ${i}`, role,
    created_at: now, updated_at: now,
  }));
  await db('users').insert([...users('agent', 20, 'agent'), ...users('customer', 50, 'customer')]);
  await db('teams').insert(Array.from({ length: 5 }, (_, i) => ({ tenant_id: tenantId, id: uuidv7(), name: `Team ${i}`, created_at: now, updated_at: now })));
  const agents = await ids('users', { role: 'agent' });
  const customers = await ids('users', { role: 'customer' });
  const teams = await ids('teams');
  const priorities = await ids('priorities');
  const [resolved] = await ids('statuses', { key: 'resolved' });
  const [open] = await ids('statuses', { key: 'open' });
  const arr = (values: string[]) => `ARRAY[${values.map((v) => `'${v}'::uuid`).join(',')}]`;

  const fr = `s.c + (s.g % 7200) * interval '1 second'`; // first response 0–2 h after creation (80 %)
  const res = `s.c + (s.g % 172800) * interval '1 second'`; // resolution 0–48 h after creation (60 %)
  const target = (met: string, metWhen: string, due: string, breachedWhen: string) => `jsonb_build_object(
      'due_at', ${iso(due)}, 'met_at', CASE WHEN ${metWhen} THEN ${iso(met)} END,
      'breached_at', CASE WHEN ${breachedWhen} THEN ${iso(due)} END,
      'status', CASE WHEN ${breachedWhen} THEN 'breached' WHEN ${metWhen} THEN 'met' ELSE 'running' END)`;
  await db.raw(`
    INSERT INTO tickets (tenant_id, id, ticket_number, subject, status_id, priority_id, requester_id, assigned_agent_id, team_id, channel,
                         created_at, updated_at, first_responded_at, resolved_at, reopened_count, sla)
    SELECT '${tenantId}', gen_random_uuid(), ${firstNumber} + s.g, 'Bench ticket ' || s.g,
           CASE WHEN s.g % 10 < 6 THEN '${resolved}'::uuid ELSE '${open}'::uuid END,
           (${arr(priorities)})[1 + s.g % ${priorities.length}], (${arr(customers)})[1 + s.g % 50], (${arr(agents)})[1 + s.g % 20],
           (${arr(teams)})[1 + s.g % 5], (ARRAY['email', 'webchat', 'api', 'webform'])[1 + s.g % 4],
           s.c, s.c, CASE WHEN s.g % 10 < 8 THEN ${fr} END, CASE WHEN s.g % 10 < 6 THEN ${res} END,
           CASE WHEN s.g % 50 = 0 THEN 1 ELSE 0 END,
           jsonb_build_object('paused', false,
             'first_response', ${target(fr, 's.g % 10 < 8', "s.c + interval '1 hour'", 's.g % 10 >= 8 OR s.g % 7200 > 3600')},
             'next_response', jsonb_build_object('due_at', null, 'met_at', null, 'breached_at', null, 'status', 'inactive'),
             'resolution', ${target(res, 's.g % 10 < 6', "s.c + interval '24 hours'", 's.g % 10 >= 6 OR s.g % 172800 > 86400')})
      FROM (SELECT g, timestamptz '${END}' - (${tickets} - g) * (interval '365 days' / ${tickets}) AS c
              FROM generate_series(1, ${tickets}) g) s`);
  await db.raw(`
    INSERT INTO messages (tenant_id, id, ticket_id, body, is_private, author_id, author_name, is_agent, channel, created_at)
    SELECT t.tenant_id, gen_random_uuid(), t.id, 'Please help', false, t.requester_id, 'Customer', false, t.channel, t.created_at
      FROM tickets t WHERE t.tenant_id = '${tenantId}'
    UNION ALL
    SELECT t.tenant_id, gen_random_uuid(), t.id, 'On it', false, t.assigned_agent_id, 'Agent', true, t.channel, t.first_responded_at
      FROM tickets t WHERE t.tenant_id = '${tenantId}' AND t.first_responded_at IS NOT NULL
    UNION ALL
    SELECT t.tenant_id, gen_random_uuid(), t.id, 'Done', false, t.assigned_agent_id, 'Agent', true, t.channel, t.first_responded_at + interval '30 minutes'
      FROM tickets t WHERE t.tenant_id = '${tenantId}' AND t.first_responded_at IS NOT NULL AND t.ticket_number % 10 < 3
    UNION ALL
    -- Follow-ups a day later (at the same UTC hour for a quarter of them) and a week later: the
    -- tickets replied to on several days, which the hour-of-day and weekday runs must count once.
    SELECT t.tenant_id, gen_random_uuid(), t.id, 'Following up', false, t.assigned_agent_id, 'Agent', true, t.channel,
           t.first_responded_at + interval '1 day' + (t.ticket_number / 10 % 4) * interval '1 hour'
      FROM tickets t WHERE t.tenant_id = '${tenantId}' AND t.first_responded_at IS NOT NULL AND t.ticket_number % 10 = 5
    UNION ALL
    SELECT t.tenant_id, gen_random_uuid(), t.id, 'Any news?', false, t.assigned_agent_id, 'Agent', true, t.channel,
           t.first_responded_at + interval '7 days 20 minutes'
      FROM tickets t WHERE t.tenant_id = '${tenantId}' AND t.first_responded_at IS NOT NULL AND t.ticket_number % 20 = 7`);
  // Breach events as the escalation job records them, numbered here (no publisher run, no NOTIFY).
  await db.raw(`
    INSERT INTO events (tenant_id, id, seq, type, ticket_id, subject_type, subject_id, from_value, data, created_at)
    SELECT t.tenant_id, gen_random_uuid(), nextval('event_seq'), x.type, t.id, 'ticket', t.id, x.at,
           jsonb_build_object('ticket_id', t.id, 'target', x.target, 'from', x.at, 'to', null, 'at', x.at, 'actor_id', null, 'actor_name', null),
           x.at::timestamptz
      FROM tickets t
     CROSS JOIN LATERAL (VALUES
       ('ticket.first_response_breached', 'first_response', t.sla->'first_response'->>'breached_at'),
       ('ticket.sla_breached', 'resolution', t.sla->'resolution'->>'breached_at')) AS x(type, target, at)
     WHERE t.tenant_id = '${tenantId}' AND x.at IS NOT NULL`);
  await db.raw(`
    INSERT INTO csat_surveys (tenant_id, id, ticket_id, token_hash, token_encrypted, created_at, expires_at, score, submitted_at)
    SELECT t.tenant_id, gen_random_uuid(), t.id, md5(t.id::text), 'x', t.resolved_at, t.resolved_at + interval '30 days',
           CASE WHEN t.ticket_number % 2 = 0 THEN 1 + t.ticket_number % 5 END,
           CASE WHEN t.ticket_number % 2 = 0 THEN t.resolved_at + interval '2 hours' END
      FROM tickets t WHERE t.tenant_id = '${tenantId}' AND t.resolved_at IS NOT NULL AND t.ticket_number % 3 = 0`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const admin = createDb(adminUrl, { max: 1 });
  const exists = (await admin.raw('select 1 from pg_database where datname = ?', [NAME])).rows.length > 0;
  if (!exists) await admin.raw(`create database ${NAME}`);
  const databaseUrl = withDatabase(adminUrl, NAME);
  const dataDir = mkdtempSync(join(tmpdir(), 'helpdesk-bench-'));
  const config = { ...loadConfig({ HELPDESK_DATA_DIR: dataDir, HELPDESK_RATE_LIMIT_PER_MIN: '1000000' }), logLevel: 'silent' };
  const deps = createDeps(config, databaseUrl, { log: createLogger('silent'), poolMax: 10 });
  try {
    await migrateLatest(deps.db);
    let tenant = await deps.db('tenants').where({ slug: 'bench' }).first();
    let apiKey: string;
    if (!tenant || !exists) {
      const started = performance.now();
      const created = await createTenant(deps, { slug: 'bench', name: 'Bench', adminEmail: 'admin@bench.example.com', adminPassword: 'benchmark password 123' }, CLI_ACTOR, new Date());
      const other = await createTenant(deps, { slug: 'other', name: 'Other', adminEmail: 'admin@other.example.com', adminPassword: 'benchmark password 123' }, CLI_ACTOR, new Date());
      await seedTenant(deps.db, created.tenant.id, TICKETS, 0);
      await seedTenant(deps.db, other.tenant.id, Math.round(TICKETS / 10), 0);
      await deps.db.raw('VACUUM ANALYZE tickets, messages, report_reply_gaps, events, csat_surveys, users, teams');
      // The bench tenant is Enterprise with the BI module (a licence row as applyLicense stores it).
      await deps.db('licenses').insert({
        tenant_id: created.tenant.id, id: uuidv7(), license_id: 'bench', customer: 'Bench', edition: 'enterprise', modules: ['bi'],
        seats: null, issued_at: new Date(), expires_at: null, raw: 'bench', installed_at: new Date(),
      });
      tenant = created.tenant;
      apiKey = created.api_key;
      console.log(`seeded ${TICKETS.toLocaleString('en-US')} tickets (+${Math.round(TICKETS / 10).toLocaleString('en-US')} in a second tenant) in ${((performance.now() - started) / 1000).toFixed(0)} s`);
      await deps.db.raw(`COMMENT ON DATABASE ${NAME} IS '${apiKey}'`);
    } else {
      apiKey = (await deps.db.raw('SELECT shobj_description(oid, \'pg_database\') AS key FROM pg_database WHERE datname = ?', [NAME])).rows[0].key;
    }
    const counts = await deps.db.raw(`SELECT (SELECT count(*) FROM tickets WHERE tenant_id = ?) AS tickets, (SELECT count(*) FROM messages WHERE tenant_id = ?) AS messages,
      (SELECT count(*) FROM events WHERE tenant_id = ?) AS events, (SELECT count(*) FROM csat_surveys WHERE tenant_id = ?) AS surveys`, [tenant.id, tenant.id, tenant.id, tenant.id]);
    console.log('tenant rows:', counts.rows[0]);
    // The report-rollup job as the scheduler runs it, brought up to END (the first run rolls the whole history).
    const rollStarted = performance.now();
    const rolled = await reportRollup(deps, new Date(END));
    console.log(`report-rollup: ${JSON.stringify(rolled)} in ${((performance.now() - rollStarted) / 1000).toFixed(1)} s`);
    // As autovacuum leaves them after the job: a first run replaces every rollup row, a re-run after
    // a reset leaves the old ones dead, and reads measured before a vacuum scan them too.
    for (const table of ['report_rollup_hours', 'report_rollup_agent_hours', 'report_rollup_breach_hours', 'report_rollup_sla_hours',
      'report_rollup_attr_hours', 'report_rollup_reply_hours', 'report_rollup_reply_totals', 'report_rollup_dirty', 'report_rollup_state']) {
      await deps.db.raw(`VACUUM ANALYZE ${table}`);
    }

    const app = await buildApp(deps);
    const year = { from: '2025-11-27T00:00:00Z', to: END };
    const month = { from: '2026-10-28T00:00:00Z', to: END };
    const team = (await deps.db('teams').where({ tenant_id: tenant.id }).first('id')).id;
    const cases: Array<[string, Record<string, string>]> = [
      ['/reports/overview', {}], ['/reports/overview', { team_id: team, channel: 'email' }],
      ['/reports/volume', { interval: 'day', tz: 'Europe/Berlin' }], ['/reports/volume', { interval: 'month', tz: 'America/New_York' }],
      ['/reports/agents', {}], ['/reports/me', {}], ['/reports/sla-breaches', {}], ['/reports/csat-ratings', {}],
      ['/reports/catalog', {}],
      // Every catalog run by every dimension but the per-ticket export (a CSV of every ticket).
      ...catalog().data.flatMap((r) => r.dimensions.filter((d) => d.key !== 'ticket').map((d) =>
        ['/reports/run', { report: r.key, group_by: d.key }] as [string, Record<string, string>])),
      // agent_replies by local day, hour and weekday in a zone with DST (offset changes inside the year).
      ['/reports/run', { report: 'agent_replies', group_by: 'day', tz: 'Europe/Berlin' }],
      ['/reports/run', { report: 'agent_replies', group_by: 'hour', tz: 'Europe/Berlin' }],
      ['/reports/run', { report: 'agent_replies', group_by: 'weekday', tz: 'Europe/Berlin' }],
      ['/reports/run', { report: 'agent_replies', group_by: 'hour', tz: 'America/New_York', team_id: team }],
      // By week with a filter: report_rollup_hours and a probe at each week's start (the reply totals hold no team).
      ['/reports/run', { report: 'agent_replies', group_by: 'week', tz: 'Europe/Berlin', team_id: team }],
      ['/analytics/overview', {}], ['/analytics/heatmap', { tz: 'Europe/Berlin' }],
    ];
    console.log(`\n${'report'.padEnd(58)} ${'30 days p50'.padStart(12)} ${'max'.padStart(7)}   ${'365 days p50'.padStart(12)} ${'max'.padStart(7)}`);
    let worst30 = 0;
    let worst365 = 0;
    for (const [url, extra] of cases.filter(([url, extra]) => !ONLY || ONLY.test(`${url}?${new URLSearchParams(extra)}`))) {
      const line: string[] = [];
      for (const window of [month, year]) {
        const query = { ...window, ...extra };
        const times: number[] = [];
        for (let i = 0; i <= RUNS; i++) {
          const started = performance.now();
          const res = await app.inject({ method: 'GET', url: `/api/v1${url}`, query, headers: { authorization: `Bearer ${apiKey}` } });
          const ms = performance.now() - started;
          if (res.statusCode !== 200) throw new Error(`${url} ${JSON.stringify(query)}: ${res.statusCode} ${res.body.slice(0, 300)}`);
          if (i > 0) times.push(ms);
        }
        times.sort((a, b) => a - b);
        if (window === month) worst30 = Math.max(worst30, times[times.length - 1]!);
        else worst365 = Math.max(worst365, times[times.length - 1]!);
        line.push(`${percentile(times, 50).toFixed(0).padStart(9)} ms ${times[times.length - 1]!.toFixed(0).padStart(4)} ms`);
      }
      const label = `${url} ${Object.entries(extra).filter(([k]) => k !== 'team_id').map(([k, v]) => `${k}=${v}`).join(' ')}${extra.team_id ? ' team_id=…' : ''}`;
      console.log(`${label.padEnd(58)} ${line.join('   ')}`);
    }
    console.log(`\nslowest answer: 30 days ${worst30.toFixed(0)} ms, 365 days ${worst365.toFixed(0)} ms (budget 500 ms)`);
    await app.close();
  } finally {
    await closeDeps(deps);
    if (!KEEP) await admin.raw(`drop database if exists ${NAME} with (force)`);
    await admin.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
