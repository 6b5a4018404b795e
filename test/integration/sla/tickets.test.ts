import t from 'tap';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { openTicket, vocab } from '../../helpers/tickets.js';
import { runJob } from '../../../src/jobs/runner.js';
import { slaEscalation } from '../../../src/sla/escalation.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { CLI_ACTOR } from '../../../src/core/context.js';
import { simulate } from '../../../src/sla/simulate.js';
import { runCommand, tempDataDir } from '../../helpers/cli.js';
import JobsRun from '../../../commands/jobs/run.js';

const MIN = 60_000;
const at = (ms: number) => new Date(ms).toISOString();
const slaEvents = (env: TestEnv, tenantId: string, ticketId: string) =>
  env.deps.db('events').where({ tenant_id: tenantId, ticket_id: ticketId }).whereIn('type', [
    'ticket.sla_warning', 'ticket.first_response_breached', 'ticket.next_response_breached', 'ticket.sla_breached',
  ]).orderBy('created_at').select('type', 'from_value', 'to_value', 'actor_id', 'actor_name', 'data');

// The live ticket's clock: the sla object and sla_due_at kept in the write's transaction, the
// escalation job announcing warnings and breaches exactly once, and agreement with the simulator.
t.test('SLA on live tickets', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const customer = await userFixture(env, tenant.id, 'customer');
  const admin = tenant.admin.token;
  const v = await vocab(env, admin);

  await t.test('creation starts FR and RES from the policy; pausing and resuming move them; the simulator agrees', async (t) => {
    const ticket = await openTicket(env, admin, { requester_id: customer.id, priority_id: v.priority.urgent });
    const created = Date.parse(ticket.created_at);
    t.same(ticket.sla.first_response, { due_at: at(created + 15 * MIN), met_at: null, breached_at: null, status: 'active' });
    t.same(ticket.sla.next_response, { due_at: null, met_at: null, breached_at: null, status: 'none' });
    t.equal(ticket.sla.resolution.due_at, at(created + 240 * MIN));
    t.equal(ticket.sla_due_at, ticket.sla.resolution.due_at, 'sla_due_at is the resolution deadline');
    t.equal(ticket.sla.paused, false);

    const paused = (await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: admin, body: { status_id: v.status.pending } })).json();
    t.equal(paused.sla.paused, true);
    t.match(paused.sla.resolution, { due_at: null, status: 'paused' });
    t.equal(paused.sla_due_at, null);
    const pausedAt = Date.parse(paused.updated_at);

    const resumed = (await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: admin, body: { status_id: v.status.open } })).json();
    const resumedAt = Date.parse(resumed.updated_at);
    t.equal(resumed.sla.paused, false);
    t.equal(resumed.sla.resolution.due_at, at(created + 240 * MIN + (resumedAt - pausedAt)), 'remaining time preserved');

    // The simulator, given the same history, computes the same deadlines.
    const sim = await inTransaction(env.deps, { tenantId: tenant.id, actor: CLI_ACTOR, now: new Date() }, (ctx) => simulate(ctx, {
      priority: 'urgent', created: ticket.created_at, events: [
        { at: paused.updated_at, kind: 'status', value: 'pending' }, { at: resumed.updated_at, kind: 'status', value: 'open' },
      ],
    }));
    t.equal(sim.targets.resolution.due_at, resumed.sla.resolution.due_at);
    t.equal(sim.targets.first_response.due_at, resumed.sla.first_response.due_at);
  });

  await t.test('priority change recomputes from the start; resolve meets, reopen resumes', async (t) => {
    const ticket = await openTicket(env, admin, { requester_id: customer.id, priority_id: v.priority.low });
    const urgent = (await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: admin, body: { priority_id: v.priority.urgent } })).json();
    t.equal(urgent.sla.first_response.due_at, at(Date.parse(ticket.created_at) + 15 * MIN), 'urgent: 15 minutes from creation, 24/7');
    const resolved = (await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: admin, body: { status_id: v.status.resolved } })).json();
    t.match(resolved.sla.resolution, { status: 'met', met_at: resolved.updated_at });
    t.match(resolved.sla.first_response, { status: 'met' });
    const reopened = (await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: admin, body: { status_id: v.status.open } })).json();
    t.match(reopened.sla.resolution, { status: 'active', met_at: null });
    t.ok(Date.parse(reopened.sla.resolution.due_at) > Date.parse(urgent.sla.resolution.due_at), 'the resolved spell did not count');
  });

  await t.test('the escalation job: warnings and breaches once each, actor null, only due tickets', async (t) => {
    const ticket = await openTicket(env, admin, { requester_id: customer.id, priority_id: v.priority.urgent });
    const created = Date.parse(ticket.created_at);
    const early = await runJob(env.deps, 'sla-escalation', { now: new Date(created + 5 * MIN) });
    t.equal(early.status, 'succeeded');
    t.same(await slaEvents(env, tenant.id, ticket.id), [], 'nothing due yet');

    await runJob(env.deps, 'sla-escalation', { now: new Date(created + 13 * MIN) });
    const warned = await slaEvents(env, tenant.id, ticket.id);
    t.match(warned, [{ type: 'ticket.sla_warning', from_value: at(created + 15 * MIN), to_value: null, actor_id: null, actor_name: null, data: { target: 'first_response' } }]);

    const late = new Date(created + 5 * 60 * MIN);
    // Two escalations at once (as two daemons would run them, bypassing the job lock): still once each.
    await Promise.all([slaEscalation(env.deps, late), slaEscalation(env.deps, late)]);
    await runJob(env.deps, 'sla-escalation', { now: late });
    const events = await slaEvents(env, tenant.id, ticket.id);
    t.same(events.map((e) => `${e.type} ${e.data.target} ${e.from_value}`).sort(), [
      `ticket.first_response_breached first_response ${at(created + 15 * MIN)}`,
      `ticket.sla_breached resolution ${at(created + 240 * MIN)}`,
      `ticket.sla_warning first_response ${at(created + 15 * MIN)}`,
      `ticket.sla_warning resolution ${at(created + 240 * MIN)}`,
    ]);
    const row = await env.deps.db('tickets').where({ tenant_id: tenant.id, id: ticket.id }).first('sla', 'sla_next_at');
    t.match(row.sla.first_response, { status: 'breached', breached_at: at(created + 15 * MIN) });
    t.equal(row.sla_next_at, null, 'nothing further to wait for');
    const timeline = (await call(env, 'GET', `/tickets/${ticket.id}/events`, { token: admin }));
    if (timeline.statusCode === 200) t.ok(timeline.json().data.some((e: { type: string }) => e.type === 'sla_breached'), 'on the ticket timeline');
  });

  await t.test('helpdesk jobs run sla-escalation --now TS moves time for the CLI too', async (t) => {
    const cliEnv = { DATABASE_URL: env.databaseUrl, HELPDESK_DATA_DIR: tempDataDir(t), HELPDESK_SECRET_KEY: 'test-secret-key', LOG_LEVEL: 'silent' };
    const ticket = await openTicket(env, admin, { requester_id: customer.id, priority_id: v.priority.urgent });
    const created = Date.parse(ticket.created_at);
    const run = await runCommand(JobsRun, ['sla-escalation', '--now', at(created + 20 * MIN), '--json'], cliEnv);
    t.equal(run.code, 0, run.stderr);
    t.match(run.json(), { name: 'sla-escalation', status: 'succeeded', result: { tickets: 1, warnings: 1, breaches: 1 } });
    const again = await runCommand(JobsRun, ['sla-escalation', '--now', at(created + 20 * MIN), '--json'], cliEnv);
    t.match(again.json(), { result: { tickets: 0, warnings: 0, breaches: 0 } }, 'nothing is due twice');
    t.same((await slaEvents(env, tenant.id, ticket.id)).map((e) => e.type).sort(), ['ticket.first_response_breached', 'ticket.sla_warning']);
    const shown = (await call(env, 'GET', `/tickets/${ticket.id}`, { token: admin })).json();
    t.match(shown.sla.first_response, { status: 'breached', breached_at: at(created + 15 * MIN) });
  });

  await t.test('a change of business hours reaches running clocks at the next escalation run', async (t) => {
    const other = await tenantFixture(env);
    const otherCustomer = await userFixture(env, other.id, 'customer');
    const ov = await vocab(env, other.admin.token);
    const ticket = await openTicket(env, other.admin.token, { requester_id: otherCustomer.id, priority_id: ov.priority.high });
    const put = await call(env, 'PUT', '/business-hours', { token: other.admin.token, body: { timezone: 'UTC', schedule: Object.fromEntries(
      ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((d) => [d, { open: '00:00', close: '24:00' }])) } });
    t.equal(put.statusCode, 200);
    const marked = await env.deps.db('tickets').where({ tenant_id: other.id, id: ticket.id }).first('sla_next_at');
    t.ok(marked.sla_next_at.getTime() <= Date.now(), 'marked due');
    await runJob(env.deps, 'sla-escalation', { now: new Date() });
    const shown = (await call(env, 'GET', `/tickets/${ticket.id}`, { token: other.admin.token })).json();
    t.equal(shown.sla.first_response.due_at, at(Date.parse(ticket.created_at) + 60 * MIN), 'open around the clock: one hour after creation');
    t.equal(shown.sla_due_at, at(Date.parse(ticket.created_at) + 480 * MIN));
  });
});
