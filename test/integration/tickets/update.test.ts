import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { openTicket, vocab } from '../../helpers/tickets.js';

/** PATCH /tickets/{id}: the one change-set function, its rules and its events. */

t.test('updating tickets', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent');
  const agent2 = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const foreignAgent = await userFixture(env, other.id, 'agent');
  const v = await vocab(env, admin);
  const foreign = await vocab(env, other.admin.token);
  const type = (await call(env, 'POST', '/ticket-types', { token: admin, body: { name: 'Incident' } })).json();
  await call(env, 'POST', '/custom-fields', { token: admin, body: { key: 'plan', label: 'Plan', kind: 'select', options: ['free', 'pro'], required: true } });
  await call(env, 'POST', '/custom-fields', { token: admin, body: { key: 'note', label: 'Note', kind: 'text' } });
  const users = await env.deps.db('users').where({ tenant_id: tenant.id }).select('id', 'name');
  const nameOf = (id: string) => users.find((u) => u.id === id)!.name;
  const events = (ticketId: string) => env.deps.db('events').where({ tenant_id: tenant.id, ticket_id: ticketId }).whereNot('type', 'ticket.created').orderBy('created_at').orderBy('type');

  await t.test('status, priority, type, assignee and team changes record their events with names', async (t) => {
    const ticket = await openTicket(env, admin, { requester_id: customer.id, plan: 'free' });
    const teamId = '0190a1b2-0000-7000-8000-0000000000bb';
    const res = await call(env, 'PATCH', `/tickets/${ticket.id}`, {
      token: agent.token,
      body: {
        status_id: v.status.open, priority_id: v.priority.high, type_id: type.id, assigned_agent_id: agent2.id, team_id: teamId,
        subject: 'New subject', summary: 'Short', resolution_code: 'none_yet', tags: ['A', 'b'], custom_fields: { note: 'hello' },
      },
    });
    t.equal(res.statusCode, 200, res.body);
    t.match(res.json(), {
      status_id: v.status.open, priority_id: v.priority.high, type_id: type.id, assigned_agent_id: agent2.id, team_id: teamId,
      subject: 'New subject', summary: 'Short', resolution_code: 'none_yet', tags: ['a', 'b'], custom_fields: { plan: 'free', note: 'hello' },
    });
    t.not(res.json().updated_at, ticket.updated_at);
    const recorded = await events(ticket.id);
    const byType = Object.fromEntries(recorded.map((e) => [e.type, e]));
    t.same(Object.keys(byType).sort(), ['ticket.assignee_changed', 'ticket.priority_changed', 'ticket.status_changed', 'ticket.team_changed', 'ticket.type_changed']);
    const actor = { actor_id: agent.id, actor_name: nameOf(agent.id) };
    t.match(byType['ticket.status_changed'], { from_value: 'New', to_value: 'Open', ...actor, data: { ticket_id: ticket.id, from: 'New', to: 'Open', ...actor, from_id: v.status.new, to_id: v.status.open } });
    t.match(byType['ticket.priority_changed'], { from_value: 'Normal', to_value: 'High', data: { from: 'Normal', to: 'High' } });
    t.match(byType['ticket.type_changed'], { from_value: null, to_value: 'Incident', data: { from: null, to: 'Incident', to_id: type.id } });
    t.match(byType['ticket.assignee_changed'], { from_value: null, to_value: nameOf(agent2.id), data: { to_id: agent2.id } });
    t.match(byType['ticket.team_changed'], { to_value: teamId, data: { to_id: teamId } });

    // The same values again: nothing changes, no event, updated_at stays.
    const same = await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: agent.token, body: { status_id: v.status.open, tags: ['b', 'a'].reverse() } });
    t.equal(same.json().updated_at, res.json().updated_at);
    t.equal((await events(ticket.id)).length, 5);

    // Clearing: null type, assignee and team; null custom value removes it.
    const cleared = await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: agent.token, body: { type_id: null, assigned_agent_id: null, team_id: null, custom_fields: { note: null } } });
    t.match(cleared.json(), { type_id: null, assigned_agent_id: null, team_id: null, custom_fields: { plan: 'free' } });
    t.notOk('note' in cleared.json().custom_fields);
    t.match((await events(ticket.id)).find((e) => e.type === 'ticket.type_changed' && e.to_value === null), { from_value: 'Incident' });
  });

  await t.test('resolved and closed statuses stamp their times; reopening clears resolved_at; closed is final', async (t) => {
    const ticket = await openTicket(env, admin, { requester_id: customer.id, plan: 'pro' });
    const resolved = (await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: admin, body: { status_id: v.status.resolved } })).json();
    t.ok(resolved.resolved_at);
    t.equal(resolved.closed_at, null);
    const reopened = (await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: admin, body: { status_id: v.status.open } })).json();
    t.equal(reopened.resolved_at, null);
    const closed = (await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: admin, body: { status_id: v.status.closed } })).json();
    t.ok(closed.closed_at);
    t.ok(closed.resolved_at, 'closing an unresolved ticket also stamps resolved_at');

    const before = await env.deps.db('tickets').where({ tenant_id: tenant.id, id: ticket.id }).first();
    const eventsBefore = (await events(ticket.id)).length;
    for (const body of [{ status_id: v.status.open }, { subject: 'again' }, {}]) {
      const res = await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: admin, body });
      t.equal(res.statusCode, 409, JSON.stringify(body));
      t.match(res.json(), { code: 'conflict', details: { reason: 'ticket_closed' } });
    }
    t.same(await env.deps.db('tickets').where({ tenant_id: tenant.id, id: ticket.id }).first(), before, 'unchanged');
    t.equal((await events(ticket.id)).length, eventsBefore);
  });

  await t.test('bad input names each problem and changes nothing', async (t) => {
    const ticket = await openTicket(env, admin, { requester_id: customer.id, plan: 'pro' });
    const retired = (await call(env, 'POST', '/ticket-types', { token: admin, body: { name: 'Retired', active: false } })).json();
    const inactive = await userFixture(env, tenant.id, 'agent');
    await env.deps.db('users').where({ tenant_id: tenant.id, id: inactive.id }).update({ active: false });
    const before = await env.deps.db('tickets').where({ tenant_id: tenant.id, id: ticket.id }).first();
    const problems = async (body: Record<string, unknown>) => {
      const res = await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: admin, body });
      t.equal(res.statusCode, 422, res.body);
      return Object.fromEntries(res.json().details.map((d: { field: string; message: string }) => [d.field, d.message]));
    };
    t.same(await problems({
      status_id: foreign.status.open, priority_id: foreign.priority.low, assigned_agent_id: foreignAgent.id, subject: 'would change',
    }), { status_id: 'does not exist', priority_id: 'does not exist', assigned_agent_id: 'does not exist' }, "other tenants' ids");
    t.same(await problems({ type_id: retired.id, assigned_agent_id: inactive.id }), { type_id: 'is an inactive ticket type', assigned_agent_id: 'is a deactivated user' });
    t.same(await problems({ assigned_agent_id: customer.id }), { assigned_agent_id: 'is not an agent or admin' });
    t.same(await problems({ custom_fields: { plan: null, note: 5, nope: 'x' } }), {
      'custom_fields.plan': 'is required', 'custom_fields.note': 'must be a string', 'custom_fields.nope': 'is not a custom field',
    });
    const schema = await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: admin, body: { subject: '', tags: Array(51).fill('x'), requester_id: customer.id, status_id: 'open' } });
    t.equal(schema.statusCode, 422);
    t.same(schema.json().details.map((d: { field: string }) => d.field).sort(), ['requester_id', 'status_id', 'subject', 'tags']);
    t.same(await env.deps.db('tickets').where({ tenant_id: tenant.id, id: ticket.id }).first(), before, 'unchanged');
  });

  await t.test('who may update', async (t) => {
    const ticket = await openTicket(env, customer.token, { plan: 'free' });
    const res = await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: customer.token, body: { subject: 'mine' } });
    t.equal(res.statusCode, 403, 'customers do not update tickets');
    t.equal((await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: other.admin.token, body: { subject: 'x' } })).statusCode, 404, 'other tenants: 404');
  });

  t.same(env.guard.violations, [], 'every query carried tenant_id');
});
