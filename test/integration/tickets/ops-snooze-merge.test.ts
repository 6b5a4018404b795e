import t from 'tap';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { ticketFixture } from '../../helpers/ticket-fixture.js';
import { count } from '../../helpers/tickets.js';
import { runJob } from '../../../src/jobs/runner.js';
import { runCommand, tempDataDir } from '../../helpers/cli.js';
import JobsRun from '../../../commands/jobs/run.js';
import { CLI_ACTOR } from '../../../src/core/context.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { Ticket } from '../../../src/tickets/models.js';
import { endSnoozeOnCustomerReply } from '../../../src/tickets/snooze.js';

const ticketRow = (env: TestEnv, tenantId: string, id: string) => env.deps.db('tickets').where({ tenant_id: tenantId, id }).first();
const eventsOf = (env: TestEnv, tenantId: string, ticketId: string, type?: string) => {
  const q = env.deps.db('events').where({ tenant_id: tenantId, ticket_id: ticketId }).orderBy('created_at').orderBy('id');
  return type ? q.where({ type }) : q;
};
/** An RFC 3339 time `days` from the wall clock (requests take their `now` from it). */
const inDays = (days: number) => new Date(Date.now() + days * 86400_000);

t.test('snooze', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const otherCustomer = await userFixture(env, other.id, 'customer');
  const ticket = await ticketFixture(env, tenant.id, customer.id);
  const foreign = await ticketFixture(env, other.id, otherCustomer.id);

  await t.test('an agent snoozes until a later time; any offset is normalised to UTC', async (t) => {
    const utc = new Date(Math.floor(inDays(7).getTime() / 1000) * 1000);
    // The same instant written with a +01:00 offset.
    const local = new Date(utc.getTime() + 3600_000).toISOString().replace(/\.\d{3}Z$/, '+01:00');
    const res = await call(env, 'POST', `/tickets/${ticket.id}/snooze`, { token: agent.token, body: { until: local } });
    t.equal(res.statusCode, 200, res.body);
    t.match(res.json(), { id: ticket.id, ticket_number: ticket.ticket_number, snoozed_until: utc.toISOString() }, 'the ticket');
    t.equal((await ticketRow(env, tenant.id, ticket.id)).snoozed_until.toISOString(), utc.toISOString());
    const [event] = await eventsOf(env, tenant.id, ticket.id, 'ticket.snoozed');
    t.match(event, { actor_id: agent.id, from_value: null, to_value: utc.toISOString(), data: { ticket_id: ticket.id, snoozed_until: utc.toISOString() } });
  });

  await t.test('refusals: past or far times, customers, other tenants, unknown ids, closed tickets', async (t) => {
    const before = await count(env, 'events', tenant.id);
    const past = await call(env, 'POST', `/tickets/${ticket.id}/snooze`, { token: agent.token, body: { until: '2001-01-01T00:00:00Z' } });
    t.equal(past.statusCode, 422);
    t.same(past.json().details, [{ field: 'until', message: 'must be in the future' }]);
    const far = await call(env, 'POST', `/tickets/${ticket.id}/snooze`, { token: agent.token, body: { until: inDays(400).toISOString() } });
    t.same(far.json().details, [{ field: 'until', message: 'must be at most a year ahead' }]);
    const malformed = await call(env, 'POST', `/tickets/${ticket.id}/snooze`, { token: agent.token, body: { until: 'tomorrow', extra: 1 } });
    t.equal(malformed.statusCode, 422);
    t.same(malformed.json().details.map((d: { field: string }) => d.field).sort(), ['extra', 'until']);
    const asCustomer = await call(env, 'POST', `/tickets/${ticket.id}/snooze`, { token: customer.token, body: { until: inDays(1).toISOString() } });
    t.equal(asCustomer.statusCode, 403);
    t.equal(asCustomer.json().code, 'forbidden');
    const crossTenant = await call(env, 'POST', `/tickets/${foreign.id}/snooze`, { token: agent.token, body: { until: inDays(1).toISOString() } });
    t.equal(crossTenant.statusCode, 404);
    t.equal(crossTenant.json().code, 'resource_not_found');
    t.equal((await ticketRow(env, other.id, foreign.id)).snoozed_until, null, "the other tenant's ticket is untouched");
    const closed = await ticketFixture(env, tenant.id, customer.id, { status: 'closed' });
    const onClosed = await call(env, 'POST', `/tickets/${closed.id}/snooze`, { token: agent.token, body: { until: inDays(1).toISOString() } });
    t.equal(onClosed.statusCode, 409);
    t.equal(onClosed.json().code, 'conflict');
    t.equal(await count(env, 'events', tenant.id), before, 'no event for a refused snooze');
  });

  await t.test('the ticket-unsnooze job ends due snoozes only, once, with no actor', async (t) => {
    const soon = await ticketFixture(env, tenant.id, customer.id);
    const later = await ticketFixture(env, tenant.id, customer.id);
    const until = new Date(Date.now() + 3600_000);
    t.equal((await call(env, 'POST', `/tickets/${soon.id}/snooze`, { token: agent.token, body: { until: until.toISOString() } })).statusCode, 200);
    t.equal((await call(env, 'POST', `/tickets/${later.id}/snooze`, { token: agent.token, body: { until: new Date(until.getTime() + 86400_000).toISOString() } })).statusCode, 200);
    const early = await runJob(env.deps, 'ticket-unsnooze', { now: new Date(until.getTime() - 1000) });
    t.match(early, { status: 'succeeded' });
    t.equal((early.result as { unsnoozed: number }).unsnoozed, 0, 'nothing due a second before');
    const run = await runJob(env.deps, 'ticket-unsnooze', { now: until });
    t.match(run, { status: 'succeeded', result: { unsnoozed: 1 } });
    t.equal((await ticketRow(env, tenant.id, soon.id)).snoozed_until, null);
    t.not((await ticketRow(env, tenant.id, later.id)).snoozed_until, null, 'a later snooze stays');
    const [event] = await eventsOf(env, tenant.id, soon.id, 'ticket.unsnoozed');
    t.match(event, { actor_id: null, actor_name: null, from_value: until.toISOString(), to_value: null, data: { reason: 'due', ticket_id: soon.id } });
    const again = await runJob(env.deps, 'ticket-unsnooze', { now: until });
    t.match(again, { status: 'succeeded', result: { unsnoozed: 0 } }, 'idempotent');

    // The operator's way: `helpdesk jobs run ticket-unsnooze --now <the later time>`.
    const cliEnv = { DATABASE_URL: env.databaseUrl, HELPDESK_DATA_DIR: tempDataDir(t), HELPDESK_SECRET_KEY: 'test-secret-key', LOG_LEVEL: 'silent' };
    const laterUntil = (await ticketRow(env, tenant.id, later.id)).snoozed_until as Date;
    const cli = await runCommand(JobsRun, ['ticket-unsnooze', '--now', laterUntil.toISOString(), '--json'], cliEnv);
    t.equal(cli.code, 0, cli.stderr);
    t.match(cli.json(), { name: 'ticket-unsnooze', status: 'succeeded', simulated_now: laterUntil.toISOString(), result: { unsnoozed: 1 } });
    t.equal((await ticketRow(env, tenant.id, later.id)).snoozed_until, null);
  });

  await t.test('DELETE ends a snooze early; without one it changes nothing', async (t) => {
    const res = await call(env, 'DELETE', `/tickets/${ticket.id}/snooze`, { token: agent.token });
    t.equal(res.statusCode, 204);
    t.equal((await ticketRow(env, tenant.id, ticket.id)).snoozed_until, null);
    const events = await eventsOf(env, tenant.id, ticket.id, 'ticket.unsnoozed');
    t.match(events, [{ actor_id: agent.id, data: { reason: 'cancelled' } }]);
    t.equal((await call(env, 'DELETE', `/tickets/${ticket.id}/snooze`, { token: agent.token })).statusCode, 204);
    t.equal((await eventsOf(env, tenant.id, ticket.id, 'ticket.unsnoozed')).length, 1, 'no second event');
    t.equal((await call(env, 'DELETE', `/tickets/${foreign.id}/snooze`, { token: agent.token })).statusCode, 404);
  });

  await t.test('closing a ticket ends its snooze; so does a customer reply, not a note', async (t) => {
    const closing = await ticketFixture(env, tenant.id, customer.id);
    t.equal((await call(env, 'POST', `/tickets/${closing.id}/snooze`, { token: agent.token, body: { until: inDays(2).toISOString() } })).statusCode, 200);
    const closed = await env.deps.db('statuses').where({ tenant_id: tenant.id, key: 'closed' }).first();
    const patched = await call(env, 'PATCH', `/tickets/${closing.id}`, { token: agent.token, body: { status_id: closed.id } });
    t.equal(patched.statusCode, 200, patched.body);
    t.equal(patched.json().snoozed_until, null, 'the answer shows the snooze gone');
    t.match(await eventsOf(env, tenant.id, closing.id, 'ticket.unsnoozed'), [{ actor_id: agent.id, data: { reason: 'closed' } }]);

    const replied = await ticketFixture(env, tenant.id, customer.id);
    t.equal((await call(env, 'POST', `/tickets/${replied.id}/snooze`, { token: agent.token, body: { until: inDays(2).toISOString() } })).statusCode, 200);
    // The conversation calls this hook for every new message (src/wiring.ts once both areas meet).
    const hook = (message: { is_agent: boolean; is_private: boolean }) =>
      inTransaction(env.deps, { tenantId: tenant.id, actor: CLI_ACTOR, now: new Date() }, async (ctx) =>
        endSnoozeOnCustomerReply(ctx, { ticket: (await Ticket.findIn(ctx, replied.id))!, message }));
    await hook({ is_agent: true, is_private: true });
    await hook({ is_agent: true, is_private: false });
    t.not((await ticketRow(env, tenant.id, replied.id)).snoozed_until, null, 'staff messages leave the snooze');
    await hook({ is_agent: false, is_private: false });
    t.equal((await ticketRow(env, tenant.id, replied.id)).snoozed_until, null, 'a customer reply ends it');
    t.match(await eventsOf(env, tenant.id, replied.id, 'ticket.unsnoozed'), [{ data: { reason: 'customer_reply' } }]);
  });

  t.same(env.guard.violations, []);
});

t.test('merge', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const otherCustomer = await userFixture(env, other.id, 'customer');
  const closedStatus = await env.deps.db('statuses').where({ tenant_id: tenant.id, key: 'closed' }).first();
  const merge = (token: string, source: string, body: unknown) => call(env, 'POST', `/tickets/${source}/merge`, { token, body });

  await t.test('the source closes with merged_into_id; the target gets a private note; events on both', async (t) => {
    const source = await ticketFixture(env, tenant.id, customer.id, { subject: 'Printer again', status: 'open' });
    const target = await ticketFixture(env, tenant.id, customer.id, { subject: 'Printer jammed' });
    const res = await merge(agent.token, source.id, { target_ticket_id: target.id, reason: 'Same outage' });
    t.equal(res.statusCode, 200, res.body);
    const answer = res.json();
    t.match(answer, { ticket_id: source.id, merged_into_id: target.id, status_id: closedStatus.id, closed_at: /Z$/ });
    const row = await ticketRow(env, tenant.id, source.id);
    t.match(row, { merged_into_id: target.id, status_id: closedStatus.id });
    t.ok(row.closed_at);
    const note = await env.deps.db('messages').where({ tenant_id: tenant.id, id: answer.note_id }).first();
    t.match(note, { ticket_id: target.id, is_private: true, is_agent: true, author_id: agent.id });
    t.match(note.body, `#${source.ticket_number}`);
    t.match(note.body, 'Same outage');

    const into = await eventsOf(env, tenant.id, source.id, 'ticket.merged_into');
    t.match(into, [{ from_value: `#${source.ticket_number}`, to_value: `#${target.ticket_number}`, actor_id: agent.id,
      data: { ticket_id: source.id, from: source.id, to: target.id, reason: 'Same outage', actor_id: agent.id } }]);
    const from = await eventsOf(env, tenant.id, target.id, 'ticket.merged_from');
    t.match(from, [{ from_value: `#${source.ticket_number}`, to_value: `#${target.ticket_number}`, data: { ticket_id: target.id, from: source.id, to: target.id } }]);
    t.match(await eventsOf(env, tenant.id, source.id, 'ticket.status_changed'), [{ from_value: 'Open', to_value: 'Closed', data: { from: 'Open', to: 'Closed' } }]);
    t.match(await eventsOf(env, tenant.id, target.id, 'ticket.message_created'), [{ data: { message_id: note.id, is_private: true } }]);

    const again = await merge(agent.token, source.id, { target_ticket_id: target.id });
    t.equal(again.statusCode, 409, 'already merged');
    t.equal(again.json().code, 'conflict');
  });

  await t.test('refusals write nothing', async (t) => {
    const a = await ticketFixture(env, tenant.id, customer.id);
    const b = await ticketFixture(env, tenant.id, customer.id);
    const closed = await ticketFixture(env, tenant.id, customer.id, { status: 'closed' });
    const foreign = await ticketFixture(env, other.id, otherCustomer.id);
    const before = { events: await count(env, 'events', tenant.id), messages: await count(env, 'messages', tenant.id) };

    const self = await merge(agent.token, a.id, { target_ticket_id: a.id });
    t.equal(self.statusCode, 422);
    t.same(self.json().details, [{ field: 'target_ticket_id', message: 'must name another ticket' }]);
    const crossTenant = await merge(agent.token, a.id, { target_ticket_id: foreign.id });
    t.equal(crossTenant.statusCode, 404, "another tenant's target is not found");
    t.notMatch(crossTenant.json().message, foreign.subject);
    const unknown = await merge(agent.token, a.id, { target_ticket_id: '0190a1b2-0000-7000-8000-0000000000ff' });
    t.equal(unknown.statusCode, 404);
    const intoClosed = await merge(agent.token, a.id, { target_ticket_id: closed.id });
    t.equal(intoClosed.statusCode, 409);
    t.match(intoClosed.json().details, { reason: 'target_closed' });
    const fromClosed = await merge(agent.token, closed.id, { target_ticket_id: a.id });
    t.equal(fromClosed.statusCode, 409);
    t.match(fromClosed.json().details, { reason: 'ticket_closed' });
    const asCustomer = await merge(customer.token, a.id, { target_ticket_id: b.id });
    t.equal(asCustomer.statusCode, 403);
    const bad = await merge(agent.token, a.id, { target_ticket_id: 'nope', reason: 'x'.repeat(2001) });
    t.equal(bad.statusCode, 422);
    t.same(bad.json().details.map((d: { field: string }) => d.field).sort(), ['reason', 'target_ticket_id']);

    t.same({ events: await count(env, 'events', tenant.id), messages: await count(env, 'messages', tenant.id) }, before);
    t.equal((await ticketRow(env, tenant.id, a.id)).merged_into_id, null);
    t.equal((await ticketRow(env, other.id, foreign.id)).updated_at.getTime(), (await ticketRow(env, other.id, foreign.id)).created_at.getTime());
  });

  await t.test('no chains: a merged ticket is no target, and earlier merges follow their primary', async (t) => {
    const d = await ticketFixture(env, tenant.id, customer.id);
    const e = await ticketFixture(env, tenant.id, customer.id);
    const f = await ticketFixture(env, tenant.id, customer.id);
    t.equal((await merge(agent.token, d.id, { target_ticket_id: e.id })).statusCode, 200);
    const intoMerged = await merge(agent.token, f.id, { target_ticket_id: d.id });
    t.equal(intoMerged.statusCode, 409);
    t.match(intoMerged.json().details, { reason: 'target_merged', merged_into_id: e.id });
    t.equal((await merge(agent.token, e.id, { target_ticket_id: f.id })).statusCode, 200);
    t.equal((await ticketRow(env, tenant.id, d.id)).merged_into_id, f.id, 'D now points at F directly');
  });

  await t.test('a snoozed source loses its snooze when merged', async (t) => {
    const source = await ticketFixture(env, tenant.id, customer.id);
    const target = await ticketFixture(env, tenant.id, customer.id);
    t.equal((await call(env, 'POST', `/tickets/${source.id}/snooze`, { token: agent.token, body: { until: inDays(3).toISOString() } })).statusCode, 200);
    t.equal((await merge(agent.token, source.id, { target_ticket_id: target.id })).statusCode, 200);
    t.equal((await ticketRow(env, tenant.id, source.id)).snoozed_until, null);
    t.match(await eventsOf(env, tenant.id, source.id, 'ticket.unsnoozed'), [{ data: { reason: 'closed' } }]);
  });

  await t.test('two opposite merges at once: one wins, the other is refused', async (t) => {
    const a = await ticketFixture(env, tenant.id, customer.id);
    const b = await ticketFixture(env, tenant.id, customer.id);
    const answers = await Promise.all([merge(agent.token, a.id, { target_ticket_id: b.id }), merge(tenant.admin.token, b.id, { target_ticket_id: a.id })]);
    t.same(answers.map((r) => r.statusCode).sort(), [200, 409]);
    const rows = [await ticketRow(env, tenant.id, a.id), await ticketRow(env, tenant.id, b.id)];
    t.equal(rows.filter((r) => r.merged_into_id).length, 1);
  });

  t.same(env.guard.violations, []);
});
