import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { openTicket, vocab } from '../../helpers/tickets.js';
import { seedReportFixture as seed } from '../../helpers/report-fixture.js';

/**
 * Reports (CONTRACT §18) against a small fixed data set whose every figure is computed by hand
 * below from the definitions in docs/reports.md. Times are UTC; the tenant reports in
 * Europe/Berlin, where 2026-10-25 (DST ends at 01:00 UTC) is 25 hours long.
 *
 * Window W = [2026-10-23T22:00Z, 2026-10-26T23:00Z) = local 24, 25 and 26 October in Berlin.
 * Previous period P = [2026-10-20T21:00Z, 2026-10-23T22:00Z) (73 hours before).
 *
 * T0 created P 10-21 10:00, first reply 11:00 (3600 s), resolution breached 10-22 10:00, resolved
 *    10-24 10:00 (in W), agent B; survey S4 sent 10-21, rated 4 on 10-24 11:00.
 * T1 created 10-23 22:30 (Berlin Sat 00:30), replies 23:30 and 10-24 01:00 by A (FR 3600 s),
 *    resolved 10-24 02:30 (14400 s), FR and RES met on time; survey S1 sent 03:00, rated 5 at 05:00.
 * T2 created 10-25 00:30 (Sun 02:30 CEST), channel api, no staff reply; FR breached 01:30.
 * T3 created 10-25 22:30 (Sun 23:30 CET — 00:30 on Monday if DST were ignored), A replied 23:00
 *    (FR 1800 s) after the FR breach at 22:45; resolved and reopened once (resolved_at null).
 * T4 created 10-26 10:00 (Mon 11:00), team X, one reply by B 10:10 (600 s) plus a private note,
 *    resolved 12:00 (7200 s), FR and RES on time; survey S2 sent 12:00, rated 2 at 13:00.
 * S3: survey on T0 sent 10-24 10:00, never answered.
 */
t.setTimeout(240_000);
const keys = licenseKeys();
const env = await testApp(t, { licensePublicKey: keys.publicKeyPem });

const W = { from: '2026-10-23T22:00:00.000Z', to: '2026-10-26T23:00:00.000Z' };
const tenant = await tenantFixture(env);
await grantLicense(env, tenant.id, keys);
const hours = await call(env, 'PUT', '/business-hours', { token: tenant.admin.token, body: { timezone: 'Europe/Berlin', monday: { open: '09:00', close: '17:00' } } });
if (hours.statusCode !== 200) throw new Error(`PUT /business-hours ${hours.statusCode} ${hours.body}`);
const data = await seed(env, tenant.id, tenant.admin.token);
// Another tenant with tickets in the same window: none of its rows may show up in the first one's figures.
const other = await tenantFixture(env);
await grantLicense(env, other.id, keys);
const otherData = await seed(env, other.id, other.admin.token);

const q = (extra: Record<string, string> = {}) => new URLSearchParams({ ...W, tz: 'Europe/Berlin', ...extra }).toString();
const get = async (path: string, token = tenant.admin.token) => {
  const res = await call(env, 'GET', path, { token });
  return res;
};
const json = async (path: string, token = tenant.admin.token) => {
  const res = await get(path, token);
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${res.body}`);
  return res.json();
};

t.test('overview: every metric as defined', async (t) => {
  const o = await json(`/reports/overview?${q()}`);
  t.equal(o.total_tickets_created, 4, 'T1..T4');
  t.equal(o.total_tickets_resolved, 3, 'T0, T1, T4 resolved in W; T3 was reopened');
  t.equal(o.avg_first_response_time_seconds, 2000, '(3600 + 1800 + 600) / 3; T2 has none');
  t.equal(o.avg_resolution_time_seconds, 10800, '(14400 + 7200) / 2');
  t.equal(o.sla_compliance_rate, 4 / 6, 'T1 FR, T1 RES, T4 FR, T4 RES on time; T2 FR, T3 FR (met after breach) breached; T0 RES decided before W');
  t.equal(o.csat_average_score, 11 / 3, 'S1 5, S2 2, S4 4 rated in W');
  t.equal(o.csat_response_rate, 2 / 3, 'S1, S2, S3 sent in W; S1 and S2 answered');
  t.same([o.from, o.to], [W.from, W.to]);

  const api = await json(`/reports/overview?${q({ channel: 'api' })}`);
  t.match(api, { total_tickets_created: 1, total_tickets_resolved: 0, avg_first_response_time_seconds: null, sla_compliance_rate: 0, csat_average_score: null, csat_response_rate: null });
  const team = await json(`/reports/overview?${q({ team_id: data.teamX })}`);
  t.match(team, { total_tickets_created: 1, total_tickets_resolved: 1, avg_first_response_time_seconds: 600, avg_resolution_time_seconds: 7200, sla_compliance_rate: 1, csat_average_score: 2, csat_response_rate: 1 });
  const foreignTeam = await json(`/reports/overview?${q({ team_id: otherData.teamX })}`);
  t.equal(foreignTeam.total_tickets_created, 0, 'another tenant\'s team filters to nothing');
});

t.test('volume: local buckets, DST day, zero-filled', async (t) => {
  const berlin = await json(`/reports/volume?${q()}`);
  t.same(berlin.series, [
    { bucket_start: '2026-10-23T22:00:00.000Z', created: 1, resolved: 2 },
    { bucket_start: '2026-10-24T22:00:00.000Z', created: 2, resolved: 0 },
    { bucket_start: '2026-10-25T23:00:00.000Z', created: 1, resolved: 1 },
  ], 'T3 at 22:30 UTC on the DST day is still 25 October in Berlin');
  const utc = await json(`/reports/volume?${q({ tz: 'UTC' })}`);
  t.same(utc.series.map((b: any) => [b.bucket_start.slice(0, 10), b.created, b.resolved]), [
    ['2026-10-23', 1, 0], ['2026-10-24', 0, 2], ['2026-10-25', 2, 0], ['2026-10-26', 1, 1],
  ]);
  const weeks = await json(`/reports/volume?${q({ interval: 'week' })}`);
  t.same(weeks.series, [
    { bucket_start: '2026-10-18T22:00:00.000Z', created: 3, resolved: 2 },
    { bucket_start: '2026-10-25T23:00:00.000Z', created: 1, resolved: 1 },
  ], 'weeks start on Monday, local');
  const months = await json(`/reports/volume?${q({ interval: 'month' })}`);
  t.same(months.series, [{ bucket_start: '2026-09-30T22:00:00.000Z', created: 4, resolved: 3 }]);
  const defaultTz = await json(`/reports/volume?${new URLSearchParams(W)}`);
  t.equal(defaultTz.tz, 'Europe/Berlin', 'tz defaults to the business-hours time zone');
});

t.test('agents and me', async (t) => {
  const agents = (await json(`/reports/agents?${q()}`)).data;
  const byName = Object.fromEntries(agents.map((a: any) => [a.agent_name, a]));
  t.same(byName['Anna Agent'], {
    agent_id: data.agentA.id, agent_name: 'Anna Agent', assigned: 2, resolved: 1, public_replies: 3,
    avg_first_response_time_seconds: 2700, avg_resolution_time_seconds: 14400, csat_average_score: 5,
  });
  t.same(byName['Bert Agent'], {
    agent_id: data.agentB.id, agent_name: 'Bert Agent', assigned: 1, resolved: 2, public_replies: 1,
    avg_first_response_time_seconds: 600, avg_resolution_time_seconds: 7200, csat_average_score: 3,
  }, 'T4 and T0 resolved in W; ratings 2 (S2) and 4 (S4); the private note is no reply');
  t.equal(agents.length, 3, 'the admin too, with zeros');
  t.notOk(agents.some((a: any) => a.agent_id === otherData.agentA.id));

  const me = await json(`/reports/me?${q()}`, data.agentA.token);
  t.same(me, byName['Anna Agent']);
  t.equal((await get(`/reports/me?${q()}`, data.customer.token)).statusCode, 403, 'customers have no report');
});

t.test('sla-breaches: cursor list of breaches in the window', async (t) => {
  const all = await json(`/reports/sla-breaches?${q()}`);
  t.same(all.data.map((b: any) => [b.ticket_id, b.target, b.breached_at]), [
    [data.T3, 'first_response', '2026-10-25T22:45:00.000Z'],
    [data.T2, 'first_response', '2026-10-25T01:30:00.000Z'],
  ]);
  t.equal(all.meta.total, 2);
  const first = await json(`/reports/sla-breaches?${q({ cursor: '', page_size: '1' })}`);
  t.equal(first.data[0].ticket_id, data.T3);
  const second = await json(`/reports/sla-breaches?${q({ cursor: first.meta.next_cursor, page_size: '1' })}`);
  t.equal(second.data[0].ticket_id, data.T2);
  t.equal(second.meta.next_cursor, null);
});

t.test('csat-ratings: list and summary', async (t) => {
  const r = await json(`/reports/csat-ratings?${q()}`);
  t.same(r.data.map((x: any) => [x.score, x.submitted_at]), [[2, '2026-10-26T13:00:00.000Z'], [4, '2026-10-24T11:00:00.000Z'], [5, '2026-10-24T05:00:00.000Z']]);
  t.same(r.summary, { count: 3, average: 11 / 3, distribution: { 1: 0, 2: 1, 3: 0, 4: 1, 5: 1 } });
  t.equal(r.meta.total, 3, 'the total is the summary count');
  const second = await json(`/reports/csat-ratings?${q({ page_size: '2', page: '2' })}`);
  t.same(second.data.map((x: any) => x.score), [5], 'the last page holds the oldest rating');
  t.match(second.meta, { page: 2, page_size: 2, total: 3, next_cursor: null });
});

t.test('catalog and run: JSON and streamed CSV', async (t) => {
  const cat = (await json('/reports/catalog')).data;
  t.ok(cat.find((r: any) => r.key === 'tickets_created').dimensions.some((d: any) => d.key === 'ticket'));
  const run = await json(`/reports/run?${q({ report: 'tickets_created', group_by: 'day' })}`);
  t.same(run.columns, ['day', 'created', 'first_responded', 'avg_first_response_time_seconds', 'resolved', 'avg_resolution_time_seconds', 'reopened']);
  t.same(run.rows, [
    ['2026-10-23T22:00:00.000Z', 1, 1, 3600, 1, 14400, 0],
    ['2026-10-24T22:00:00.000Z', 2, 1, 1800, 0, null, 1],
    ['2026-10-25T23:00:00.000Z', 1, 1, 600, 1, 7200, 0],
  ]);
  const sla = await json(`/reports/run?${q({ report: 'sla_outcomes', group_by: 'target' })}`);
  t.same(sla.rows, [['first_response', 4, 2, 2, 0.5], ['resolution', 2, 2, 0, 1]]);
  const agents = await json(`/reports/run?${q({ report: 'agent_replies', group_by: 'agent' })}`);
  t.same(agents.columns, ['agent_id', 'agent_name', 'public_replies', 'tickets']);
  t.same(agents.rows, [[data.agentA.id, 'Anna Agent', 3, 2], [data.agentB.id, 'Bert Agent', 1, 1]]);

  const csv = await get(`/reports/run?${q({ report: 'tickets_created', group_by: 'day', format: 'csv' })}`);
  t.equal(csv.statusCode, 200);
  t.match(csv.headers['content-type'], /^text\/csv/);
  t.match(csv.headers['content-disposition'], /^attachment; filename="?tickets_created-by-day-2026-10-23-2026-10-26\.csv/);
  t.equal(csv.body, [
    'day,created,first_responded,avg_first_response_time_seconds,resolved,avg_resolution_time_seconds,reopened',
    '2026-10-23T22:00:00.000Z,1,1,3600,1,14400,0',
    '2026-10-24T22:00:00.000Z,2,1,1800,0,,1',
    '2026-10-25T23:00:00.000Z,1,1,600,1,7200,0',
    '',
  ].join('\n'));
  const perTicket = await get(`/reports/run?${q({ report: 'tickets_created', group_by: 'ticket', format: 'csv' })}`);
  t.same(perTicket.body.trim().split('\n').slice(1).map((l) => l.split(',').slice(0, 2)), [['1002', '1'], ['1003', '1'], ['1004', '1'], ['1005', '1']]);

  const bad = await get(`/reports/run?${q({ report: 'csat_ratings', group_by: 'ticket' })}`);
  t.equal(bad.statusCode, 422);
  t.equal(bad.json().details[0].field, 'group_by');
});

t.test('BI: overview with the previous period, rates, heatmap', async (t) => {
  const a = await json(`/analytics/overview?${q()}`);
  t.same([a.previous_from, a.previous_to], ['2026-10-20T21:00:00.000Z', W.from]);
  t.same(a.total_tickets_created, { value: 4, previous: 1, change: 3, change_ratio: 3 });
  t.same(a.total_tickets_resolved, { value: 3, previous: 0, change: 3, change_ratio: null });
  t.same(a.avg_resolution_time_seconds, { value: 10800, previous: 259200, change: 10800 - 259200, change_ratio: (10800 - 259200) / 259200 });
  t.same(a.sla_compliance_rate, { value: 4 / 6, previous: 0.5, change: 4 / 6 - 0.5, change_ratio: (4 / 6 - 0.5) / 0.5 }, 'P: T0 FR on time, T0 RES breached');
  t.same(a.csat_average_score, { value: 11 / 3, previous: null, change: null, change_ratio: null });
  t.same(a.reopen_rate, { value: 1 / 3, previous: 0, change: 1 / 3, change_ratio: null }, 'T3 of T1, T3, T4; T0 before');
  t.same(a.one_touch_resolution_rate, { value: 0.5, previous: 1, change: -0.5, change_ratio: -0.5 }, 'T4 of T1, T4; T0 before');

  const h = await json(`/analytics/heatmap?${q()}`);
  t.equal(h.cells.length, 168);
  t.same(h.cells.filter((c: any) => c.created > 0), [
    { weekday: 0, hour: 11, created: 1 }, { weekday: 5, hour: 0, created: 1 }, { weekday: 6, hour: 2, created: 1 }, { weekday: 6, hour: 23, created: 1 },
  ]);
});

t.test('bad input is 422 with the field', async (t) => {
  for (const [query, field] of [
    [{ from: W.to, to: W.from }, 'from'], [{ tz: 'Mars/Olympus' }, 'tz'], [{ from: '2020-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }, 'to'],
    [{ channel: 'pigeon' }, 'channel'], [{ team_id: 'x' }, 'team_id'], [{ from: 'yesterday' }, 'from'],
  ] as const) {
    const res = await get(`/reports/overview?${new URLSearchParams(query as Record<string, string>)}`);
    t.equal(res.statusCode, 422, JSON.stringify(query));
    t.match(res.json().details.map((d: any) => d.field).join(','), field);
  }
  t.equal((await get('/reports/volume?interval=year')).statusCode, 422);
});

t.test('gates: reporting needs Enterprise, analytics the bi module; /reports/me is free', async (t) => {
  const community = await tenantFixture(env);
  const agent = await userFixture(env, community.id, 'agent');
  for (const path of ['/reports/overview', '/reports/volume', '/reports/agents', '/reports/sla-breaches', '/reports/csat-ratings', '/reports/catalog', '/reports/run?report=tickets_created', '/analytics/overview', '/analytics/heatmap']) {
    const res = await get(path, community.admin.token);
    t.equal(res.statusCode, 403, path);
    t.equal(res.json().code, 'feature_not_licensed', path);
  }
  const me = await get('/reports/me', agent.token);
  t.equal(me.statusCode, 200);
  t.match(me.json(), { agent_id: agent.id, assigned: 0, public_replies: 0, avg_first_response_time_seconds: null });

  const enterpriseOnly = await tenantFixture(env);
  await grantLicense(env, enterpriseOnly.id, keys, { modules: [] });
  t.equal((await get('/reports/overview', enterpriseOnly.admin.token)).statusCode, 200);
  t.equal((await get('/analytics/heatmap', enterpriseOnly.admin.token)).json().details.feature, 'bi');
  t.equal((await get('/reports/overview', agent.token)).statusCode, 403, 'an agent session has no reporting:read of its own');
});

t.test('reopening through the API counts once per reopening', async (t) => {
  const fresh = await tenantFixture(env);
  await grantLicense(env, fresh.id, keys);
  const customer = await userFixture(env, fresh.id, 'customer');
  const v = await vocab(env, fresh.admin.token);
  const ticket = await openTicket(env, customer.token, {});
  for (const status of ['resolved', 'open', 'resolved', 'pending', 'resolved']) {
    const res = await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: fresh.admin.token, body: { status_id: v.status[status] } });
    t.equal(res.statusCode, 200, status);
  }
  const row = await env.deps.db('tickets').where({ tenant_id: fresh.id, id: ticket.id }).first();
  t.equal(row.reopened_count, 2);
  const a = await json('/analytics/overview', fresh.admin.token);
  t.equal(a.reopen_rate.value, 1);
  t.equal(a.one_touch_resolution_rate.value, 0, 'resolved without a staff reply, and reopened');
});

t.test('the tenant guard saw no unscoped query', async (t) => {
  t.same(env.guard.violations ?? [], []);
});
