import t from 'tap';
import { call, testApp, tenantFixture } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { seedReportFixture } from '../../helpers/report-fixture.js';
import { runJob } from '../../../src/jobs/runner.js';
import { uuidv7 } from '../../../src/core/ids.js';
import { wholeHourZone } from '../../../src/reports/zone-offsets.js';

/**
 * Report rollups are exact at read time (docs/reports.md "Rollups"): on the hand-computed data set
 * of reports.test.ts, every rollup-backed report answers the same with no rollups (all live), after
 * the `report-rollup` job, after late changes to past tickets (dirty hours read live), and after the
 * job recomputed those hours — for whole-hour windows, windows with partial edge hours, filters and
 * time zones.
 */
t.setTimeout(240_000);
const keys = licenseKeys();
const env = await testApp(t, { licensePublicKey: keys.publicKeyPem });
const db = env.deps.db;

const tenant = await tenantFixture(env);
await grantLicense(env, tenant.id, keys);
await call(env, 'PUT', '/business-hours', { token: tenant.admin.token, body: { timezone: 'Europe/Berlin', monday: { open: '09:00', close: '17:00' } } });
const data = await seedReportFixture(env, tenant.id, tenant.admin.token);
const other = await tenantFixture(env);
await seedReportFixture(env, other.id, other.admin.token);

const json = async (path: string) => {
  const res = await call(env, 'GET', path, { token: tenant.admin.token });
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${res.body}`);
  return String(res.headers['content-type']).includes('csv') ? res.body : res.json();
};
const windows = [
  { from: '2026-10-23T22:00:00.000Z', to: '2026-10-26T23:00:00.000Z' },
  // Partial edge hours: T1 (22:30) and T4 (10:00) fall in hours the window covers only in part.
  { from: '2026-10-23T22:15:00.000Z', to: '2026-10-26T10:05:00.000Z' },
  { from: '2026-10-01T00:00:00.000Z', to: '2026-11-01T00:00:00.000Z' },
];
const CATALOG_DIMENSIONS = ['agent', 'day', 'week', 'month', 'hour', 'weekday', 'channel', 'team', 'priority'];
// A window starting between two of Anna's replies on T1 (23:30 and 01:00): her ticket counts
// through the reply gap that contains the window's start.
const between = new URLSearchParams({ from: '2026-10-24T00:00:00.000Z', to: '2026-10-30T00:00:00.000Z' });
const paths = () => [
  ...['agent', 'day', 'team', 'channel'].map((group_by) => `/reports/run?${between}&report=agent_replies&group_by=${group_by}&tz=UTC`),
  ...windows.flatMap((w) => {
  const q = (extra: Record<string, string> = {}) => new URLSearchParams({ ...w, ...extra }).toString();
  return [
    `/reports/overview?${q()}`, `/reports/overview?${q({ team_id: data.teamX })}`, `/reports/overview?${q({ channel: 'api' })}`,
    `/reports/overview?${q({ channel: 'email', team_id: data.teamX })}`,
    `/analytics/overview?${q()}`, `/analytics/overview?${q({ channel: 'email' })}`,
    `/reports/agents?${q()}`, `/reports/agents?${q({ team_id: data.teamX })}`, `/reports/agents?${q({ channel: 'email' })}`,
    `/reports/agents?${q({ channel: 'email', team_id: data.teamX })}`, `/reports/me?${q()}`,
    `/reports/sla-breaches?${q()}`, `/reports/sla-breaches?${q({ channel: 'api' })}`, `/reports/sla-breaches?${q({ team_id: data.teamX })}`,
    `/reports/sla-breaches?${q({ page_size: '1', page: '2' })}`,
    ...['day', 'week', 'month', 'hour', 'weekday', 'channel', 'team'].map((group_by) => `/reports/run?${q({ report: 'tickets_created', group_by })}`),
    `/reports/run?${q({ report: 'tickets_created', group_by: 'team', channel: 'email' })}`,
    ...['target', 'day', 'week', 'month', 'channel', 'team'].map((group_by) => `/reports/run?${q({ report: 'sla_outcomes', group_by })}`),
    `/reports/run?${q({ report: 'sla_outcomes', group_by: 'target', channel: 'api' })}`,
    `/reports/run?${q({ report: 'sla_outcomes', group_by: 'day', tz: 'Asia/Kolkata', format: 'csv' })}`,
    `/reports/run?${q({ report: 'tickets_created', group_by: 'day', tz: 'America/New_York', team_id: data.teamX })}`,
    `/reports/run?${q({ report: 'tickets_created', group_by: 'hour', tz: 'Asia/Kolkata' })}`,
    `/reports/run?${q({ report: 'tickets_created', group_by: 'weekday', tz: 'Europe/Berlin', format: 'csv' })}`,
    `/reports/run?${q({ report: 'tickets_created', group_by: 'agent' })}`, `/reports/run?${q({ report: 'tickets_created', group_by: 'agent', team_id: data.teamX })}`,
    ...CATALOG_DIMENSIONS.flatMap((group_by) => [
      `/reports/run?${q({ report: 'tickets_resolved', group_by })}`, `/reports/run?${q({ report: 'agent_replies', group_by })}`,
      `/reports/run?${q({ report: 'agent_replies', group_by, tz: 'UTC' })}`, `/reports/run?${q({ report: 'agent_replies', group_by, channel: 'email' })}`,
    ]),
    ...['score', 'day', 'week', 'month', 'channel', 'team', 'priority', 'agent'].map((group_by) => `/reports/run?${q({ report: 'csat_ratings', group_by })}`),
    `/reports/run?${q({ report: 'csat_ratings', group_by: 'agent', team_id: data.teamX })}`, `/reports/csat-ratings?${q()}`,
    `/reports/csat-ratings?${q({ channel: 'email', page_size: '1', page: '2' })}`,
    `/reports/run?${q({ report: 'tickets_resolved', group_by: 'agent', channel: 'email' })}`,
    ...['priority', 'status'].flatMap((group_by) => [
      `/reports/run?${q({ report: 'tickets_created', group_by })}`, `/reports/run?${q({ report: 'tickets_created', group_by, team_id: data.teamX })}`,
    ]),
    ...['agent', 'priority'].flatMap((group_by) => [
      `/reports/run?${q({ report: 'sla_outcomes', group_by })}`, `/reports/run?${q({ report: 'sla_outcomes', group_by, channel: 'api' })}`,
    ]),
    `/reports/run?${q({ report: 'tickets_resolved', group_by: 'day', tz: 'America/New_York', format: 'csv' })}`,
    `/reports/run?${q({ report: 'agent_replies', group_by: 'team', team_id: data.teamX })}`,
    `/reports/run?${q({ report: 'agent_replies', group_by: 'day', tz: 'Asia/Kolkata' })}`,
    ...['Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe'].flatMap((tz) => [
      ...['day', 'week', 'month'].map((interval) => `/reports/volume?${q({ tz, interval })}`),
      `/reports/volume?${q({ tz, interval: 'day', team_id: data.teamX })}`,
      `/analytics/heatmap?${q({ tz })}`, `/analytics/heatmap?${q({ tz, channel: 'email' })}`,
    ]),
  ];
  }),
];
const snapshot = async () => Object.fromEntries(await Promise.all(paths().map(async (p) => [p, await json(p)] as const)));
/** The live definition: the same reports with the tenant's rollups out of use (no rollup state). */
const liveSnapshot = async () => {
  const state = await db('report_rollup_state').where({ tenant_id: tenant.id }).first();
  await db('report_rollup_state').where({ tenant_id: tenant.id }).delete();
  try {
    return await snapshot();
  } finally {
    if (state) await db('report_rollup_state').insert(state);
  }
};
const dirtyCount = async () => Number((await db('report_rollup_dirty').where({ tenant_id: tenant.id }).count({ n: '*' }))[0]!.n);
const NOW = new Date('2026-11-01T00:30:00Z');

const live = await snapshot();
const overview0 = `/reports/overview?${new URLSearchParams(windows[0]!)}`;
t.equal(live[overview0].total_tickets_created, 4, 'the hand-computed figure (reports.test.ts)');
// By hand: Anna replied on T1 at 23:30 and 01:00 (10-23/24) and on T3 at 23:00 (10-25), Bert on T4 at 10:10 (10-26).
t.same(live[`/reports/run?${between}&report=agent_replies&group_by=agent&tz=UTC`].rows,
  [[data.agentA.id, 'Anna Agent', 2, 2], [data.agentB.id, 'Bert Agent', 1, 1]], 'replies and tickets after the window starts mid-conversation');
t.same(live[`/reports/run?${new URLSearchParams({ ...windows[0]!, report: 'agent_replies', group_by: 'day', tz: 'UTC' })}`].rows.map((r: unknown[]) => r.slice(1)),
  [[1, 1], [1, 1], [1, 1], [1, 1]], 'T1 counts on both UTC days it was replied to');
t.same(live[`/reports/run?${new URLSearchParams({ ...windows[0]!, report: 'agent_replies', group_by: 'day' })}`].rows.map((r: unknown[]) => r.slice(1)),
  [[2, 1], [2, 2]], 'in Berlin both T1 replies fall on Saturday 24 October (one ticket), T3 and T4 on Monday the 26th');

t.test('the job rolls every whole hour up; reports answer the same from the rollups', async (t) => {
  const run = await runJob(env.deps, 'report-rollup', { now: NOW });
  t.equal(run.status, 'succeeded');
  t.ok((run.result as { hours_rolled: number }).hours_rolled > 0);
  const state = await db('report_rollup_state').where({ tenant_id: tenant.id }).first();
  t.same(new Date(state.rolled_until).toISOString(), '2026-11-01T00:00:00.000Z', 'up to the last whole hour before now');
  t.equal(await dirtyCount(), 0, 'every dirty hour recomputed');
  t.ok(Number((await db('report_rollup_hours').where({ tenant_id: tenant.id }).count({ n: '*' }))[0]!.n) > 0);
  t.same(await snapshot(), live, 'same figures with and without rollups');

  const again = await runJob(env.deps, 'report-rollup', { now: NOW });
  t.match(again.result, { hours_rolled: 0, dirty_recomputed: 0 }, 'idempotent: nothing left to do');
  t.same(await snapshot(), live);
});

t.test('wholeHourZone: only zones a whole number of hours off UTC all through the window re-bucket rollups', async (t) => {
  const w = [new Date('2026-01-01T00:00:00Z'), new Date('2026-12-31T00:00:00Z')] as const;
  t.ok(wholeHourZone('Europe/Berlin', ...w));
  t.ok(wholeHourZone('America/New_York', ...w));
  t.notOk(wholeHourZone('Asia/Kolkata', ...w));
  t.notOk(wholeHourZone('Asia/Kathmandu', ...w));
  t.notOk(wholeHourZone('Australia/Lord_Howe', ...w), '+10:30 standard time');
});

t.test('reports really read the rollups for whole clean hours', async (t) => {
  // T2 was created 2026-10-25 00:30 UTC; bend its rolled-up hour and the overview follows.
  const hour = { tenant_id: tenant.id, hour: new Date('2026-10-25T00:00:00Z') };
  t.equal(await db('report_rollup_hours').where(hour).increment('created', 100), 1);
  const bent = await json(`/reports/overview?${new URLSearchParams(windows[0]!)}`);
  t.equal(bent.total_tickets_created, 104);
  const agentHour = { tenant_id: tenant.id, hour: new Date('2026-10-24T01:00:00Z'), agent_id: data.agentA.id };
  t.ok(await db('report_rollup_agent_hours').where(agentHour).increment('replies', 100) >= 1, 'Anna replied on T1 at 01:00');
  const agents = await json(`/reports/agents?${new URLSearchParams(windows[0]!)}`);
  const anna = agents.data.find((a: { agent_id: string }) => a.agent_id === data.agentA.id);
  const liveAnna = live[`/reports/agents?${new URLSearchParams(windows[0]!)}`].data.find((a: { agent_id: string }) => a.agent_id === data.agentA.id);
  t.equal(anna.public_replies, liveAnna.public_replies + 100, 'the agents report reads the agent rollups');
  await db('report_rollup_agent_hours').where(agentHour).decrement('replies', 100);
  const breachHour = { tenant_id: tenant.id, hour: new Date('2026-10-25T01:00:00Z') };
  t.equal(await db('report_rollup_breach_hours').where(breachHour).increment('breaches', 100), 1, 'T2 breached at 01:30');
  const breaches = await json(`/reports/sla-breaches?${new URLSearchParams(windows[0]!)}`);
  t.equal(breaches.meta.total, live[`/reports/sla-breaches?${new URLSearchParams(windows[0]!)}`].meta.total + 100, 'the breach total reads the breach rollups');
  await db('report_rollup_breach_hours').where(breachHour).decrement('breaches', 100);
  const run = await json(`/reports/run?${new URLSearchParams({ ...windows[0]!, report: 'tickets_created', group_by: 'channel' })}`);
  t.same(run.rows.find((r: unknown[]) => r[0] === 'api').slice(0, 2), ['api', 101], 'tickets_created runs read the rollups (T2, bent by 100)');
  const slaHour = { tenant_id: tenant.id, hour: new Date('2026-10-25T01:00:00Z'), target: 'first_response' };
  t.equal(await db('report_rollup_sla_hours').where(slaHour).increment('decided', 100), 1, 'T2 first response breached at 01:30');
  const sla = await json(`/reports/run?${new URLSearchParams({ ...windows[0]!, report: 'sla_outcomes', group_by: 'target' })}`);
  const liveSla = live[`/reports/run?${new URLSearchParams({ ...windows[0]!, report: 'sla_outcomes', group_by: 'target' })}`];
  t.equal(sla.rows.find((r: unknown[]) => r[0] === 'first_response')[1], liveSla.rows.find((r: unknown[]) => r[0] === 'first_response')[1] + 100, 'sla_outcomes runs read the SLA rollups');
  await db('report_rollup_sla_hours').where(slaHour).decrement('decided', 100);
  // T0 was resolved 2026-10-24 10:00 (email); Anna's replies on T1 were at 23:30 and 01:00.
  const resolvedHour = { tenant_id: tenant.id, hour: new Date('2026-10-24T10:00:00Z') };
  t.equal(await db('report_rollup_hours').where(resolvedHour).increment('resolved', 100), 1);
  const resolvedPath = `/reports/run?${new URLSearchParams({ ...windows[0]!, report: 'tickets_resolved', group_by: 'channel' })}`;
  const email = (body: { rows: unknown[][] }) => body.rows.find((r) => r[0] === 'email')![1];
  t.equal(email(await json(resolvedPath)), Number(email(live[resolvedPath])) + 100, 'tickets_resolved runs read the rollups');
  await db('report_rollup_hours').where(resolvedHour).decrement('resolved', 100);
  const replyHour = { tenant_id: tenant.id, hour: new Date('2026-10-23T23:00:00Z'), agent_id: data.agentA.id };
  t.equal(await db('report_rollup_agent_hours').where(replyHour).increment('reply_tickets', 100), 1);
  const repliesRun = await json(`/reports/run?${new URLSearchParams({ ...windows[0]!, report: 'agent_replies', group_by: 'agent' })}`);
  t.same(repliesRun.rows.find((r: unknown[]) => r[0] === data.agentA.id).slice(2), [3, 102], 'agent_replies runs read the pair rollups');
  await db('report_rollup_agent_hours').where(replyHour).decrement('reply_tickets', 100);
  // Anna's reply on T1 at 23:30 UTC on the 23rd: bend its hour's reply rollups (the totals, and
  // the row of T1's channel, no team) and the runs by day, hour, weekday and (totals) week follow.
  const bendReplies = (table: string, by: number) => db.raw(`
    UPDATE ${table} SET replies = replies + ?, hour_firsts = hour_firsts + ?,
           ${table === 'report_rollup_reply_totals' ? 'week_firsts' : 'day_firsts'} = ARRAY(SELECT v + ? FROM unnest(${table === 'report_rollup_reply_totals' ? 'week_firsts' : 'day_firsts'}) WITH ORDINALITY AS a(v, i) ORDER BY i),
           wday_firsts = ARRAY(SELECT v + ? FROM unnest(wday_firsts) WITH ORDINALITY AS a(v, i) ORDER BY i)
     WHERE tenant_id = ? AND hour = '2026-10-23T23:00:00Z'`, [by, by, by, by, tenant.id]);
  const t1 = await db('tickets').where({ tenant_id: tenant.id, id: data.T1 }).first('channel');
  for (const filter of [{}, { channel: String(t1.channel) }] as Array<Record<string, string>>) {
    const table = Object.keys(filter).length ? 'report_rollup_reply_hours' : 'report_rollup_reply_totals';
    const weeks = Object.keys(filter).length ? [] : [['week', '2026-10-19T00:00:00.000Z'] as const];
    for (const [group_by, k] of [['day', '2026-10-23T00:00:00.000Z'], ['hour', 23], ['weekday', 4], ...weeks] as const) {
      const path = `/reports/run?${new URLSearchParams({ ...windows[0]!, report: 'agent_replies', group_by, tz: 'UTC', ...filter })}`;
      const before = (await json(path)).rows.find((r: unknown[]) => r[0] === k);
      t.equal((await bendReplies(table, 100)).rowCount, 1);
      const after = (await json(path)).rows.find((r: unknown[]) => r[0] === k);
      await bendReplies(table, -100);
      t.same(after.slice(1), [before[1] + 100, before[2] + 100], `agent_replies by ${group_by} reads ${table}`);
    }
  }
  const day = await json(`/reports/volume?${new URLSearchParams({ ...windows[0]!, tz: 'Europe/Berlin', interval: 'day' })}`);
  t.equal(day.series[1].created, 102, 'Berlin Sunday 25 October: T2 (bent by 100) and T3');
  const kolkata = await json(`/reports/volume?${new URLSearchParams({ ...windows[0]!, tz: 'Asia/Kolkata', interval: 'month' })}`);
  t.equal(kolkata.series[0].created, 4, 'a half-hour zone is answered live');
  await db('report_rollup_hours').where(hour).decrement('created', 100);
  t.same(await snapshot(), live);
});

t.test('late changes to past tickets: dirty hours are read live, the job brings them back', async (t) => {
  await db.transaction(async (trx) => {
    // T1 reopened (resolved in W, now open again, counted once).
    await trx('tickets').where({ tenant_id: tenant.id, id: data.T1 }).update({ resolved_at: null, status_id: data.v.status.open, reopened_count: 1 });
    // T2 resolved later, its resolution target met.
    await trx('tickets').where({ tenant_id: tenant.id, id: data.T2 }).update({
      resolved_at: new Date('2026-10-26T05:00:00Z'),
      sla: JSON.stringify({ paused: false, first_response: { met_at: null, breached_at: '2026-10-25T01:30:00.000Z' }, next_response: {}, resolution: { met_at: '2026-10-26T05:00:00.000Z', breached_at: null } }),
    });
    // T4 leaves team X: its own figures and its survey's move out of the team filter.
    await trx('tickets').where({ tenant_id: tenant.id, id: data.T4 }).update({ team_id: null });
    // T0 (rated S1) passes from Bert to Anna: its figures and its rating follow the new assignee.
    await trx('tickets').where({ tenant_id: tenant.id, id: data.T0 }).update({ assigned_agent_id: data.agentA.id });
    // T2 moves from the api channel to email: its breach follows it under the channel filter.
    await trx('tickets').where({ tenant_id: tenant.id, id: data.T2 }).update({ channel: 'email' });
    // A late breach event for T4, in a rolled-up hour.
    await trx('events').insert({
      tenant_id: tenant.id, id: uuidv7(), type: 'ticket.next_response_breached', ticket_id: data.T4, subject_type: 'ticket', subject_id: data.T4,
      from_value: '2026-10-26T10:40:00.000Z', created_at: new Date('2026-10-26T10:40:00Z'),
      data: JSON.stringify({ ticket_id: data.T4, target: 'next_response', from: '2026-10-26T10:40:00.000Z', to: null, at: '2026-10-26T10:40:00.000Z', actor_id: null, actor_name: null }),
    });
    // An earlier reply by Bert on T3 (22:40), before Anna's (23:00): hers stays her own first but is
    // no longer the ticket's, in an hour nothing else here touches (only the reply gaps mark it).
    await trx('messages').insert({
      tenant_id: tenant.id, id: uuidv7(), ticket_id: data.T3, body: 'early', author_id: data.agentB.id, author_name: 'x',
      is_agent: true, is_private: false, channel: 'email', created_at: new Date('2026-10-25T22:40:00Z'),
    });
    // T1 (rated S1 at 05:00, replied to at 23:30 and 01:00) becomes urgent: its rating and replies
    // move to another priority, in hours its other changes here do not touch.
    await trx('tickets').where({ tenant_id: tenant.id, id: data.T1 }).update({ priority_id: data.v.priority.urgent });
    // Bert's reply on T4 is re-attributed to Anna (an author change of a reply in a rolled-up hour).
    await trx('messages').where({ tenant_id: tenant.id, ticket_id: data.T4, author_id: data.agentB.id, is_private: false }).update({ author_id: data.agentA.id });
  });
  // A late rating of S3 (sent in W, rated after it) and a second public reply on T4 (no longer one-touch).
  await db('csat_surveys').where({ tenant_id: tenant.id, ticket_id: data.T0, score: null }).update({ score: 3, submitted_at: new Date('2026-10-30T09:00:00Z') });
  await db('messages').insert({
    tenant_id: tenant.id, id: uuidv7(), ticket_id: data.T4, body: 'late', author_id: data.agentA.id, author_name: 'x',
    is_agent: true, is_private: false, channel: 'email', created_at: new Date('2026-10-29T08:00:00Z'),
  });
  t.ok(await dirtyCount() > 0, 'the changes marked their hours dirty');

  const expected = await liveSnapshot();
  t.not(JSON.stringify(expected), JSON.stringify(live), 'the figures did change');
  const w = expected[overview0];
  t.equal(w.total_tickets_resolved, 3, 'T0, T2, T4 (T1 reopened)');
  t.equal(w.csat_response_rate, 1, 'S1, S2 and now S3 (sent in W, rated after it) answered; it was 2 / 3');
  t.equal(expected[`/reports/overview?${new URLSearchParams({ ...windows[0]!, team_id: data.teamX })}`].total_tickets_created, 0, 'team X has no ticket left');
  const agents = expected[`/reports/agents?${new URLSearchParams(windows[2]!)}`].data;
  const before = live[`/reports/agents?${new URLSearchParams(windows[2]!)}`].data;
  t.not(JSON.stringify(agents), JSON.stringify(before), 'the agent figures did change');
  const q0 = new URLSearchParams(windows[0]!);
  t.equal(expected[`/reports/sla-breaches?${q0}`].meta.total, live[`/reports/sla-breaches?${q0}`].meta.total + 1, 'the late breach counts');
  t.equal(expected[`/reports/sla-breaches?${new URLSearchParams({ ...windows[0]!, channel: 'api' })}`].meta.total, 0, 'T2 left the api channel');
  t.same(await snapshot(), expected, 'with stale rollups for the dirty hours, reads still equal the live definition');

  const run = await runJob(env.deps, 'report-rollup', { now: NOW });
  t.ok((run.result as { dirty_recomputed: number }).dirty_recomputed > 0);
  t.equal(await dirtyCount(), 0);
  t.same(await snapshot(), expected, 'and after the job recomputed them');
});

t.test('agent_replies by day, local hour and weekday count a ticket once across days, weeks and an autumn fold', async (t) => {
  const reply = (ticket_id: string, author: { id: string }, at: string) => ({
    tenant_id: tenant.id, id: uuidv7(), ticket_id, body: 'again', author_id: author.id, author_name: 'x',
    is_agent: true, is_private: false, channel: 'email', created_at: new Date(at),
  });
  // Each write alone, as replies arrive: every one leaves its hours dirty in rolled-up time.
  // T2 in both 02:xx hours of Berlin's autumn fold (02:40 CEST, then 02:20 CET).
  await db('messages').insert(reply(data.T2, data.agentB, '2026-10-25T00:40:00Z'));
  await db('messages').insert(reply(data.T2, data.agentB, '2026-10-25T01:20:00Z'));
  // T4 at 11:xx Berlin on two days (10:10 UTC on the 26th, 10:30 UTC on the 27th).
  await db('messages').insert(reply(data.T4, data.agentA, '2026-10-27T10:30:00Z'));
  // T0 on two Wednesdays a week apart (the 21st at 11:00 UTC, the 28th at 11:30 UTC): one weekday,
  // and one UTC hour of the day.
  await db('messages').insert(reply(data.T0, data.agentB, '2026-10-28T11:30:00Z'));
  // T1 a day before its first reply, in the same hour (23:10 UTC on the 22nd; it was first
  // replied to at 23:30 UTC on the 23rd): a reply inserted before all the ticket's others.
  await db('messages').insert(reply(data.T1, data.agentA, '2026-10-22T23:10:00Z'));
  // T3 twice in the 25th hour of Berlin's fold day (22:05 and 22:35 UTC, 23:xx CET), after the
  // change: the day's hours from its start run to 24.
  await db('messages').insert(reply(data.T3, data.agentA, '2026-10-25T22:05:00Z'));
  await db('messages').insert(reply(data.T3, data.agentA, '2026-10-25T22:35:00Z'));
  // T0 at 23:30 UTC on the 25th: in Antarctica/Troll (back two hours that day) its first reply of
  // the day, in the day's 26th hour.
  await db('messages').insert(reply(data.T0, data.agentB, '2026-10-25T23:30:00Z'));
  const october = windows[2]!;
  const run = (group_by: string, tz: string, extra: Record<string, string> = {}) =>
    `/reports/run?${new URLSearchParams({ ...october, report: 'agent_replies', group_by, tz, ...extra })}`;
  const extraPaths = [
    ...['day', 'week', 'hour', 'weekday'].flatMap((group_by) => ['Europe/Berlin', 'UTC', 'America/New_York'].map((tz) => run(group_by, tz))),
    run('hour', 'Europe/Berlin', { channel: 'api' }), run('weekday', 'UTC', { team_id: data.teamX }),
    `/reports/run?${new URLSearchParams({ ...windows[0]!, report: 'agent_replies', group_by: 'hour', tz: 'Europe/Berlin' })}`,
    `/reports/run?${new URLSearchParams({ ...windows[1]!, report: 'agent_replies', group_by: 'weekday', tz: 'Europe/Berlin' })}`,
  ];
  const read = async () => ({
    ...(await snapshot()),
    ...Object.fromEntries(await Promise.all(extraPaths.map(async (p) => [p, await json(p)] as const))),
  });
  const state = await db('report_rollup_state').where({ tenant_id: tenant.id }).first();
  await db('report_rollup_state').where({ tenant_id: tenant.id }).delete();
  const expected = await read().finally(() => db('report_rollup_state').insert(state));
  const row = (path: string, k: number) => expected[path].rows.find((r: unknown[]) => r[0] === k);
  // By hand over October: [bucket, public replies, tickets].
  t.same(row(run('hour', 'Europe/Berlin'), 2), [2, 2, 1], 'T2 twice in the fold\'s 02:xx, one ticket');
  t.same(row(run('hour', 'UTC'), 1), [1, 2, 2], 'UTC 01:xx: T1 (the 24th) and T2 (the 25th)');
  t.same(row(run('hour', 'Europe/Berlin'), 11), [11, 2, 1], 'T4 at 11:xx on two days, one ticket');
  t.same(row(run('hour', 'UTC'), 11), [11, 2, 1], 'T0 at 11:xx UTC a week apart, one ticket');
  t.same(row(run('weekday', 'Europe/Berlin'), 2), [2, 2, 1], 'T0 on two Wednesdays, one ticket');
  t.same(row(run('weekday', 'Europe/Berlin'), 6), [6, 5, 2], 'Sunday the 25th: T2 twice in the fold, T3 three times in its 25th hour (22:05, 22:35, 22:40 UTC), two tickets');
  t.same(row(run('hour', 'UTC'), 23), [23, 4, 3], 'UTC 23:xx: T1 on the 22nd and 23rd, T3 and T0 on the 25th');
  // Against the definition itself, count(DISTINCT) over the replies, by day, hour and weekday, in
  // five zones, for windows whose first day is whole or partial.
  const BUCKETS: Record<string, (tz: string) => string> = {
    day: (tz) => `date_trunc('day', created_at AT TIME ZONE '${tz}')`,
    hour: (tz) => `extract(hour FROM created_at AT TIME ZONE '${tz}')`,
    weekday: (tz) => `extract(isodow FROM created_at AT TIME ZONE '${tz}')`,
    week: (tz) => `date_trunc('week', created_at AT TIME ZONE '${tz}')`,
  };
  const definition = async (w: { from: string; to: string }, tz: string, by: string, teamId?: string) => (await db.raw(
    `SELECT count(*)::int AS n, count(DISTINCT ticket_id)::int AS tickets FROM messages
      WHERE tenant_id = ? AND is_agent AND NOT is_private AND created_at >= ? AND created_at < ?
        ${teamId ? 'AND ticket_id IN (SELECT id FROM tickets WHERE tenant_id = messages.tenant_id AND team_id = ?)' : ''}
      GROUP BY ${BUCKETS[by]!(tz)} ORDER BY ${BUCKETS[by]!(tz)}`,
    [tenant.id, w.from, w.to, ...(teamId ? [teamId] : [])])).rows.map((r: { n: number; tickets: number }) => [r.n, r.tickets]);
  // From 01:00 UTC on the 25th: between T2's two replies of that day (00:40 and 01:20), so T2's
  // ticket counts on the 25th through its second, whose previous reply lies before the window.
  const midDay = { from: '2026-10-25T01:00:00.000Z', to: '2026-10-26T00:00:00.000Z' };
  // From the 23rd at 23:20 UTC: between T1's replies on the 22nd and 23rd, both at 23:xx UTC.
  const afterRepeat = { from: '2026-10-22T23:20:00.000Z', to: '2026-11-01T00:00:00.000Z' };
  t.same((await json(`/reports/run?${new URLSearchParams({ ...midDay, report: 'agent_replies', group_by: 'day', tz: 'UTC' })}`)).rows.map((r: unknown[]) => r.slice(1)),
    [[6, 3]], 'by hand: T2 at 01:20, T3 at 22:05, 22:35, 22:40 and 23:00, T0 at 23:30 on the 25th: six replies, three tickets');
  const againstDefinition = async (when: string) => {
    for (const w of [october, windows[1]!, midDay, afterRepeat, Object.fromEntries(between) as { from: string; to: string }]) {
      // Troll goes back two hours on Berlin's fold day (a 26-hour day); Kolkata is off the whole hour.
      for (const tz of ['Europe/Berlin', 'UTC', 'America/New_York', 'Asia/Kolkata', 'Antarctica/Troll']) {
        for (const by of ['day', 'hour', 'weekday', 'week']) {
          const path = `/reports/run?${new URLSearchParams({ ...w, report: 'agent_replies', group_by: by, tz })}`;
          t.same((await json(path)).rows.map((r: unknown[]) => r.slice(1)), await definition(w, tz, by), `${when}: by ${by} in ${tz} from ${w.from}, the definition's figures`);
          t.same((await json(`${path}&team_id=${data.teamX}`)).rows.map((r: unknown[]) => r.slice(1)), await definition(w, tz, by, data.teamX),
            `${when}: by ${by} in ${tz} from ${w.from} for one team, the definition's figures`);
        }
      }
    }
  };
  await againstDefinition('dirty hours read live');
  t.same(await read(), expected, 'dirty hours read live: the same figures');
  const job = await runJob(env.deps, 'report-rollup', { now: NOW });
  t.ok((job.result as { dirty_recomputed: number }).dirty_recomputed > 0);
  t.same(await read(), expected, 'read from the rolled-up hours: the same figures');
  await againstDefinition('from the rolled-up hours');

  // A reply written before rolled-up ones changes their flags: their hours are dirty until the job.
  const spot = async (when: string) => {
    for (const tz of ['Europe/Berlin', 'UTC']) {
      for (const by of ['day', 'hour', 'weekday', 'week']) {
        const path = `/reports/run?${new URLSearchParams({ ...october, report: 'agent_replies', group_by: by, tz })}`;
        t.same((await json(path)).rows.map((r: unknown[]) => r.slice(1)), await definition(october, tz, by), `${when}: by ${by} in ${tz}, the definition's figures`);
      }
    }
  };
  // T4 at 23:30 UTC on the 26th: its reply at 10:30 UTC on the 27th now follows one on the same
  // Berlin day (its previous reply changes, and is not null before or after).
  await db('messages').insert(reply(data.T4, data.agentB, '2026-10-26T23:30:00Z'));
  await spot('a reply before a rolled-up one, its previous reply changed');
  await runJob(env.deps, 'report-rollup', { now: NOW });
  await spot('after the job');
  // T4 at 10:05 UTC on Tuesday the 20th: its reply on Tuesday the 27th keeps its previous reply
  // (the 26th's) but is no longer the ticket's first on a Tuesday: only its earlier hours change.
  await db('messages').insert(reply(data.T4, data.agentB, '2026-10-20T10:05:00Z'));
  await spot('a reply a week before a rolled-up one, its earlier hours changed');
  await runJob(env.deps, 'report-rollup', { now: NOW });
  await spot('after the job again');
});

t.test('a change at or after rolled_until needs no rollup: the hours are live until the next run', async (t) => {
  const late = { tenant_id: tenant.id, ticket_id: data.T1, token_hash: uuidv7(), token_encrypted: 'x', expires_at: new Date('2027-01-01T00:00:00Z') };
  await db('csat_surveys').insert({ ...late, id: uuidv7(), created_at: new Date('2026-10-31T23:59:00Z'), score: 1, submitted_at: new Date('2026-11-01T00:10:00Z') });
  const window = { from: '2026-10-31T00:00:00.000Z', to: '2026-11-01T01:00:00.000Z' };
  const o = await json(`/reports/overview?${new URLSearchParams(window)}`);
  t.equal(o.csat_average_score, 1, 'the rating after rolled_until, read live');
  t.equal(o.csat_response_rate, 1, 'the survey sent in a rolled-up hour that is now dirty, read live');
});
