import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, testApp, tenantFixture } from '../../helpers/app.js';
import { runCommand, tempDataDir } from '../../helpers/cli.js';
import { uuidv7 } from '../../../src/core/ids.js';
import SlaSimulate from '../../../commands/sla/simulate.js';

// `helpdesk sla simulate` against a real database: the tenant's own configuration, files that
// replace it, every rule of CONTRACT §11 as a scenario, and bad input.
t.test('sla simulate', async (t) => {
  const app = await testApp(t);
  const tenant = await tenantFixture(app);
  const env = { DATABASE_URL: app.databaseUrl, HELPDESK_DATA_DIR: tempDataDir(t), HELPDESK_SECRET_KEY: 'test-secret-key', LOG_LEVEL: 'silent' };
  const dir = mkdtempSync(join(tmpdir(), 'helpdesk-sla-'));
  let n = 0;
  const file = (content: unknown) => {
    const path = join(dir, `f${++n}.json`);
    writeFileSync(path, JSON.stringify(content));
    return path;
  };
  const sim = async (args: string[], events?: unknown[]) => {
    const res = await runCommand(SlaSimulate, ['--tenant', tenant.slug, ...args, ...(events ? ['--events', file(events)] : []), '--json'], env);
    return { ...res, out: res.code === 0 ? res.json() : null };
  };
  const timeline = (out: { timeline: Array<{ at: string; target: string; kind: string }> }) => out.timeline.map((e) => `${e.at.slice(5, 16)} ${e.target} ${e.kind}`);

  await t.test('a fresh ticket: exact JSON shape and the default policy of the priority', async (t) => {
    const res = await sim(['--priority', 'high', '--created', '2026-11-27T16:00:00Z']);
    t.equal(res.code, 0, res.stderr);
    t.same(Object.keys(res.out), ['targets', 'timeline']);
    t.same(res.out.targets.first_response, { due_at: '2026-11-27T17:00:00.000Z', warn_at: '2026-11-27T16:48:00.000Z', met_at: null, breached_at: null, status: 'active' });
    t.same(res.out.targets.next_response, { due_at: null, warn_at: null, met_at: null, breached_at: null, status: 'none' });
    t.equal(res.out.targets.resolution.due_at, '2026-11-30T16:00:00.000Z', 'Friday 16:00 + 8 business hours: 1 h Friday, 7 h Monday');
    t.same(res.out.timeline, [
      { at: '2026-11-27T16:00:00.000Z', target: 'first_response', kind: 'start', due_at: null },
      { at: '2026-11-27T16:00:00.000Z', target: 'resolution', kind: 'start', due_at: null },
    ]);
    const urgent = await sim(['--priority', 'urgent', '--created', '2026-11-27T16:00:00Z']);
    t.equal(urgent.out.targets.first_response.due_at, '2026-11-27T16:15:00.000Z', 'urgent is 24/7');
  });

  await t.test('first response met, next response cycles, pause in pending, resume by customer reply, resolve and reopen', async (t) => {
    const res = await sim(['--priority', 'high', '--created', '2026-11-23T09:00:00Z'], [
      { at: '2026-11-23T09:30:00Z', kind: 'agent_reply' },
      { at: '2026-11-23T09:40:00Z', kind: 'status', value: 'pending' },
      { at: '2026-11-24T09:00:00Z', kind: 'customer_reply' },
      { at: '2026-11-24T10:00:00Z', kind: 'agent_reply' },
      { at: '2026-11-24T11:00:00Z', kind: 'status', value: 'resolved' },
      { at: '2026-11-25T09:00:00Z', kind: 'customer_reply' },
    ]);
    t.equal(res.code, 0, res.stderr);
    t.same(timeline(res.out), [
      '11-23T09:00 first_response start', '11-23T09:00 resolution start', '11-23T09:30 first_response met',
      '11-23T09:40 resolution pause', '11-24T09:00 resolution resume', '11-24T09:00 next_response start',
      '11-24T10:00 next_response met', '11-24T11:00 resolution met', '11-25T09:00 resolution resume', '11-25T09:00 next_response start',
    ]);
    // RES counted 40 min (Mon) + 2 h (Tue) = 160 of 480 min; 320 left from Wed 09:00 → 14:20.
    t.match(res.out.targets, {
      first_response: { status: 'met', met_at: '2026-11-23T09:30:00.000Z', due_at: '2026-11-23T10:00:00.000Z' },
      next_response: { status: 'active', due_at: '2026-11-25T11:00:00.000Z' },
      resolution: { status: 'active', due_at: '2026-11-25T14:20:00.000Z', met_at: null },
    });
  });

  await t.test('paused at the end: due_at null and status paused', async (t) => {
    const res = await sim(['--priority', 'normal', '--created', '2026-11-23T09:00:00Z'], [{ at: '2026-11-23T10:00:00Z', kind: 'status', value: 'waiting_on_vendor' }]);
    t.match(res.out.targets.first_response, { status: 'paused', due_at: null, warn_at: null });
    t.match(res.out.targets.resolution, { status: 'paused', due_at: null });
  });

  await t.test('warning, breach, then met: stays breached with met_at; --until runs the clock on', async (t) => {
    const res = await sim(['--priority', 'high', '--created', '2026-11-23T09:00:00Z', '--until', '2026-11-24T12:00:00Z'], [{ at: '2026-11-23T11:00:00Z', kind: 'agent_reply' }]);
    t.same(res.out.targets.first_response, {
      due_at: '2026-11-23T10:00:00.000Z', warn_at: '2026-11-23T09:48:00.000Z', met_at: '2026-11-23T11:00:00.000Z', breached_at: '2026-11-23T10:00:00.000Z', status: 'breached',
    });
    t.same(timeline(res.out), [
      '11-23T09:00 first_response start', '11-23T09:00 resolution start', '11-23T09:48 first_response warning',
      '11-23T10:00 first_response breach', '11-23T11:00 first_response met', '11-23T15:24 resolution warning', '11-23T17:00 resolution breach',
    ]);
  });

  await t.test('priority change recomputes from the start; type change moves nothing; overrides apply', async (t) => {
    const res = await sim(['--priority', 'normal', '--created', '2026-11-23T09:00:00Z'], [{ at: '2026-11-23T09:30:00Z', kind: 'priority', value: 'urgent' }]);
    t.match(res.out.targets.first_response, { status: 'breached', breached_at: '2026-11-23T09:15:00.000Z' });
    t.match(res.out.targets.resolution, { status: 'active', due_at: '2026-11-23T13:00:00.000Z' });

    const typeId = uuidv7();
    await app.deps.db('ticket_types').insert({ tenant_id: tenant.id, id: typeId, name: 'Incident', created_at: new Date(), updated_at: new Date() });
    const normal = (await app.deps.db('priorities').where({ tenant_id: tenant.id, key: 'normal' }).first('id')).id;
    t.equal((await call(app, 'PATCH', `/ticket-types/${typeId}/sla-policies/${normal}`, { token: tenant.admin.token, body: { resolve_hours: 2, warn_percent: 50 } })).statusCode, 200);
    const typed = await sim(['--priority', 'normal', '--type', 'incident', '--created', '2026-11-23T09:00:00Z']);
    t.match(typed.out.targets.resolution, { due_at: '2026-11-23T11:00:00.000Z', warn_at: '2026-11-23T10:00:00.000Z' }, 'resolve_hours × 60, warn_percent, business-hours clock kept');
    t.match(typed.out.targets.first_response, { due_at: '2026-11-23T13:00:00.000Z', warn_at: '2026-11-23T11:00:00.000Z' });
    const retyped = await sim(['--priority', 'normal', '--created', '2026-11-23T09:00:00Z'], [{ at: '2026-11-23T09:10:00Z', kind: 'type', value: 'Incident' }]);
    t.equal(retyped.out.targets.resolution.due_at, '2026-11-25T17:00:00.000Z', 'a type change moves nothing (normal: 1440 business minutes)');
  });

  await t.test("the tenant's business hours and holidays, or files that replace them", async (t) => {
    t.equal((await call(app, 'PUT', '/business-hours', { token: tenant.admin.token, body: { timezone: 'America/New_York', monday: { open: '09:00', close: '17:00' }, tuesday: { open: '09:00', close: '17:00' } } })).statusCode, 200);
    t.equal((await call(app, 'POST', '/business-hours/holidays', { token: tenant.admin.token, body: { name: 'Closed', date: '2026-11-24' } })).statusCode, 201);
    // Mon 23 Nov 16:00 EST (21:00Z) + 2 h: 1 h Monday, Tuesday a holiday, next open Monday 30th 09:00 EST → 10:00 EST = 15:00Z.
    const res = await sim(['--priority', 'high', '--created', '2026-11-23T21:00:00Z']);
    t.equal(res.out.targets.first_response.due_at, '2026-11-23T22:00:00.000Z');
    const nr = await sim(['--priority', 'high', '--created', '2026-11-23T21:30:00Z']);
    t.equal(nr.out.targets.first_response.due_at, '2026-11-30T14:30:00.000Z', 'across the holiday and the closed days');
    const tried = await sim(['--priority', 'high', '--created', '2026-11-23T21:30:00Z', '--business-hours', file({ timezone: 'UTC', schedule: { monday: { open: '00:00', close: '24:00' } } }), '--holidays', file([])]);
    t.equal(tried.out.targets.first_response.due_at, '2026-11-23T22:30:00.000Z');
    // DST: Sunday 1 Nov 2026 is 25 h long in New York.
    const dst = await sim(['--priority', 'high', '--created', '2026-11-01T04:00:00Z', '--business-hours', file({ timezone: 'America/New_York', sunday: { open: '00:00', close: '24:00' } }), '--holidays', file([])]);
    t.equal(dst.out.targets.resolution.due_at, '2026-11-01T12:00:00.000Z');
  });

  await t.test('text output: the targets and the timeline', async (t) => {
    const res = await runCommand(SlaSimulate, ['--tenant', tenant.slug, '--priority', 'urgent', '--created', '2026-11-23T09:00:00Z'], env);
    t.equal(res.code, 0, res.stderr);
    t.match(res.stdout, /^first_response +active +due=2026-11-23T09:15:00\.000Z warn=2026-11-23T09:12:00\.000Z met=- breached=-$/m);
    t.match(res.stdout, /^2026-11-23T09:00:00\.000Z resolution +start$/m);
  });

  await t.test('bad input: one problem per field, exit code 2, unknown tenant 3', async (t) => {
    const bad = await sim(['--priority', 'high', '--created', '2026-11-23T09:00:00Z'], [
      { at: 'yesterday', kind: 'agent_reply' }, { at: '2026-11-23T10:00:00Z', kind: 'dance' }, { at: '2026-11-23T10:00:00Z', kind: 'status' },
      { at: '2026-11-23T10:00:00Z', kind: 'agent_reply', value: 'x', extra: 1 },
    ]);
    t.equal(bad.code, 2);
    t.same(JSON.parse(bad.stdout).error.details.map((d: { field: string }) => d.field), ['events.0.at', 'events.1.kind', 'events.2.value', 'events.3.extra', 'events.3.value']);
    const cases: Array<[string[], string]> = [
      [['--priority', 'nope', '--created', '2026-11-23T09:00:00Z'], 'priority'],
      [['--priority', 'high', '--created', 'monday'], 'created'],
      [['--priority', 'high', '--created', '2026-11-23T09:00:00Z', '--type', 'No such type'], 'type'],
      [['--priority', 'high', '--created', '2026-11-23T09:00:00Z', '--events', file({ not: 'an array' })], 'events'],
      [['--priority', 'high', '--created', '2026-11-23T09:00:00Z', '--events', file([{ at: '2026-11-22T09:00:00Z', kind: 'agent_reply' }])], 'events.0.at'],
      [['--priority', 'high', '--created', '2026-11-23T09:00:00Z', '--events', file([{ at: '2026-11-23T10:00:00Z', kind: 'status', value: 'limbo' }])], 'events.0.value'],
      [['--priority', 'high', '--created', '2026-11-23T09:00:00Z', '--business-hours', file({ timezone: 'Nowhere/Land' })], 'business_hours.timezone'],
      [['--priority', 'high', '--created', '2026-11-23T09:00:00Z', '--holidays', file([{ date: '2026-02-31x' }])], 'holidays.0.date'],
      [['--priority', 'high', '--created', '2026-11-23T09:00:00Z', '--events', join(dir, 'missing.json')], 'events'],
    ];
    for (const [args, field] of cases) {
      const res = await sim(args);
      t.equal(res.code, 2, `${field}: exit 2 (${res.stdout})`);
      t.equal(JSON.parse(res.stdout).error.details[0].field, field);
    }
    const unknown = await runCommand(SlaSimulate, ['--tenant', 'no-such-tenant', '--priority', 'high', '--created', '2026-11-23T09:00:00Z', '--json'], env);
    t.equal(unknown.code, 3);
  });
});
