import t from 'tap';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { openTicket, vocab } from '../../helpers/tickets.js';

/**
 * A create and a reply each leave one version of the ticket row. Every version writes an entry in
 * each index of `tickets` and fires its statement triggers, so the SLA clock's columns travel with
 * the create's INSERT and with the reply's UPDATE instead of following them as an UPDATE of their
 * own. A trigger of the test's database records every row write; the clock still runs as before.
 */
async function recordRowWrites(env: TestEnv): Promise<void> {
  await env.deps.db.raw(`
    CREATE TABLE test_ticket_writes (seq bigserial PRIMARY KEY, op text NOT NULL, ticket_id uuid NOT NULL);
    CREATE FUNCTION test_record_ticket_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO test_ticket_writes (op, ticket_id) VALUES (TG_OP, NEW.id); RETURN NULL; END $$;
    CREATE TRIGGER test_ticket_writes AFTER INSERT OR UPDATE ON tickets FOR EACH ROW EXECUTE FUNCTION test_record_ticket_write();
  `);
}

const writes = async (env: TestEnv, ticketId: string) =>
  (await env.deps.db('test_ticket_writes').where({ ticket_id: ticketId }).orderBy('seq').select('op')).map((r: { op: string }) => r.op);

const slaState = async (env: TestEnv, tenantId: string, ticketId: string) =>
  (await env.deps.db('tickets').where({ tenant_id: tenantId, id: ticketId }).first('sla_state')).sla_state as {
    events: Array<{ kind: string; status?: { key: string } }>;
  };

t.test('one version of the ticket row per create and per reply', async (t) => {
  const env = await testApp(t);
  await recordRowWrites(env);
  const tenant = await tenantFixture(env);
  const customer = await userFixture(env, tenant.id, 'customer');
  const agent = await userFixture(env, tenant.id, 'agent');
  const v = await vocab(env, tenant.admin.token);

  await t.test('a create inserts the row with its SLA clock and writes it no more', async (t) => {
    const ticket = await openTicket(env, agent.token, { requester_id: customer.id, priority_id: v.priority.urgent });
    t.same(await writes(env, ticket.id), ['INSERT']);
    const created = Date.parse(ticket.created_at);
    t.equal(ticket.sla.first_response.due_at, new Date(created + 15 * 60_000).toISOString(), 'the answer carries the clock');
    t.equal(ticket.sla_due_at, new Date(created + 240 * 60_000).toISOString());
    const state = await slaState(env, tenant.id, ticket.id);
    t.same(state.events, [], 'the stored clock starts with no history');
    const event = await env.deps.db('events').where({ tenant_id: tenant.id, ticket_id: ticket.id, type: 'ticket.created' }).first();
    t.equal(event.data.sla_due_at, ticket.sla_due_at, 'so does ticket.created');
  });

  await t.test('a public staff reply updates the row once: first response, updated_at and the clock', async (t) => {
    const ticket = await openTicket(env, agent.token, { requester_id: customer.id, priority_id: v.priority.urgent });
    const res = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body: 'On it' } });
    t.equal(res.statusCode, 201);
    t.same(await writes(env, ticket.id), ['INSERT', 'UPDATE']);
    const after = (await call(env, 'GET', `/tickets/${ticket.id}`, { token: agent.token })).json();
    const repliedAt = res.json().created_at;
    t.equal(after.first_responded_at, repliedAt);
    t.equal(after.updated_at, repliedAt);
    t.match(after.sla.first_response, { met_at: repliedAt, status: 'met' });
    t.same((await slaState(env, tenant.id, ticket.id)).events.map((e) => e.kind), ['agent_reply']);
  });

  await t.test('a private note updates the row once and leaves the clock alone', async (t) => {
    const ticket = await openTicket(env, agent.token, { requester_id: customer.id });
    const res = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body: 'internal', is_private: true } });
    t.equal(res.statusCode, 201);
    t.same(await writes(env, ticket.id), ['INSERT', 'UPDATE']);
    const after = (await call(env, 'GET', `/tickets/${ticket.id}`, { token: agent.token })).json();
    t.equal(after.first_responded_at, null);
    t.equal(after.updated_at, res.json().created_at);
    t.same((await slaState(env, tenant.id, ticket.id)).events, []);
  });

  await t.test('a customer reply that reopens: the status change, then the reply, the clock in that order', async (t) => {
    const resolve = async (id: string) =>
      t.equal((await call(env, 'PATCH', `/tickets/${id}`, { token: agent.token, body: { status_id: v.status.resolved } })).statusCode, 200);
    // What reopening writes as a status change of its own (the change, its hooks), for comparison.
    const other = await openTicket(env, agent.token, { requester_id: customer.id });
    await resolve(other.id);
    const beforeReopen = (await writes(env, other.id)).length;
    t.equal((await call(env, 'PATCH', `/tickets/${other.id}`, { token: agent.token, body: { status_id: v.status.open } })).statusCode, 200);
    const reopenWrites = (await writes(env, other.id)).length - beforeReopen;

    const ticket = await openTicket(env, agent.token, { requester_id: customer.id });
    await resolve(ticket.id);
    const beforeReply = (await writes(env, ticket.id)).length;
    const res = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: customer.token, body: { body: 'Still broken' } });
    t.equal(res.statusCode, 201);
    t.equal((await writes(env, ticket.id)).length - beforeReply, reopenWrites + 1, 'the reopening status change, and one write of the reply');
    const after = (await call(env, 'GET', `/tickets/${ticket.id}`, { token: agent.token })).json();
    t.equal(after.status_id, v.status.open);
    t.equal(after.resolved_at, null);
    t.equal(after.updated_at, res.json().created_at);
    const events = (await slaState(env, tenant.id, ticket.id)).events;
    t.same(events.map((e) => [e.kind, e.status?.key ?? null]), [['status', 'resolved'], ['status', 'open'], ['customer_reply', null]]);
    t.equal(after.sla.resolution.status, 'active', 'the resolution clock runs again');
  });
});
