import t from 'tap';
import { apiKeyFixture, call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { ticketFixture } from '../../helpers/ticket-fixture.js';
import { count } from '../../helpers/tickets.js';

const eventsOf = (env: TestEnv, tenantId: string, ticketId: string, type: string) =>
  env.deps.db('events').where({ tenant_id: tenantId, ticket_id: ticketId, type }).orderBy('created_at').orderBy('id');

t.test('links', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const otherCustomer = await userFixture(env, other.id, 'customer');
  const a = await ticketFixture(env, tenant.id, customer.id, { subject: 'Alpha' });
  const b = await ticketFixture(env, tenant.id, customer.id, { subject: 'Beta' });
  const closed = await ticketFixture(env, tenant.id, customer.id, { subject: 'Old', status: 'closed' });
  const foreign = await ticketFixture(env, other.id, otherCustomer.id, { subject: 'Secret' });
  let linkId = '';

  await t.test('a link is visible from both tickets, with the other end', async (t) => {
    const res = await call(env, 'POST', `/tickets/${a.id}/links`, { token: agent.token, body: { target_ticket_id: b.id } });
    t.equal(res.statusCode, 201, res.body);
    const link = res.json();
    linkId = link.id;
    t.match(link, { ticket_id: a.id, linked_ticket: { id: b.id, ticket_number: b.ticket_number, subject: 'Beta' }, created_by: agent.id, created_at: /Z$/ });
    const fromA = (await call(env, 'GET', `/tickets/${a.id}/links`, { token: agent.token })).json();
    t.match(fromA, { data: [{ id: link.id, ticket_id: a.id, linked_ticket: { id: b.id } }], meta: { page: 1, page_size: 20, total: 1 } });
    const fromB = (await call(env, 'GET', `/tickets/${b.id}/links`, { token: agent.token })).json();
    t.match(fromB, { data: [{ id: link.id, ticket_id: b.id, linked_ticket: { id: a.id, subject: 'Alpha' } }], meta: { total: 1 } });
    t.match(await eventsOf(env, tenant.id, a.id, 'ticket.link_added'), [{ to_value: `#${b.ticket_number}`, actor_id: agent.id, data: { link_id: link.id, linked_ticket_id: b.id } }]);
    t.match(await eventsOf(env, tenant.id, b.id, 'ticket.link_added'), [{ to_value: `#${a.ticket_number}`, data: { linked_ticket_id: a.id } }]);
  });

  await t.test('refusals: the pair again (either way), itself, other tenants, customers; nothing written', async (t) => {
    const before = { links: await count(env, 'ticket_links', tenant.id), events: await count(env, 'events', tenant.id) };
    const again = await call(env, 'POST', `/tickets/${b.id}/links`, { token: agent.token, body: { target_ticket_id: a.id } });
    t.equal(again.statusCode, 409);
    t.same(again.json().details, [{ field: 'target_ticket_id', message: 'is already taken' }]);
    t.equal(again.json().code, 'already_exists');
    const self = await call(env, 'POST', `/tickets/${a.id}/links`, { token: agent.token, body: { target_ticket_id: a.id } });
    t.equal(self.statusCode, 422);
    t.same(self.json().details, [{ field: 'target_ticket_id', message: 'must name another ticket' }]);
    const crossTarget = await call(env, 'POST', `/tickets/${a.id}/links`, { token: agent.token, body: { target_ticket_id: foreign.id } });
    t.equal(crossTarget.statusCode, 404);
    const crossPath = await call(env, 'POST', `/tickets/${foreign.id}/links`, { token: agent.token, body: { target_ticket_id: a.id } });
    t.equal(crossPath.statusCode, 404);
    const asCustomer = await call(env, 'POST', `/tickets/${a.id}/links`, { token: customer.token, body: { target_ticket_id: closed.id } });
    t.equal(asCustomer.statusCode, 403);
    t.equal((await call(env, 'GET', `/tickets/${a.id}/links`, { token: customer.token })).statusCode, 403, 'links are staff only');
    const malformed = await call(env, 'POST', `/tickets/${a.id}/links`, { token: agent.token, body: { target_ticket_id: 42 } });
    t.equal(malformed.statusCode, 422);
    t.same({ links: await count(env, 'ticket_links', tenant.id), events: await count(env, 'events', tenant.id) }, before);
    t.equal((await call(env, 'GET', `/tickets/${foreign.id}/links`, { token: agent.token })).statusCode, 404);
  });

  await t.test('closed tickets may be linked', async (t) => {
    const res = await call(env, 'POST', `/tickets/${closed.id}/links`, { token: agent.token, body: { target_ticket_id: a.id } });
    t.equal(res.statusCode, 201);
    t.equal((await call(env, 'GET', `/tickets/${a.id}/links`, { token: agent.token })).json().meta.total, 2);
  });

  await t.test('DELETE from either end; a link of another ticket is not found', async (t) => {
    const wrongTicket = await call(env, 'DELETE', `/tickets/${closed.id}/links/${linkId}`, { token: agent.token });
    t.equal(wrongTicket.statusCode, 404, 'the link does not belong to that ticket');
    const res = await call(env, 'DELETE', `/tickets/${b.id}/links/${linkId}`, { token: agent.token });
    t.equal(res.statusCode, 204);
    t.equal((await call(env, 'GET', `/tickets/${b.id}/links`, { token: agent.token })).json().meta.total, 0);
    t.match(await eventsOf(env, tenant.id, a.id, 'ticket.link_removed'), [{ from_value: `#${b.ticket_number}`, to_value: null }]);
    t.match(await eventsOf(env, tenant.id, b.id, 'ticket.link_removed'), [{ from_value: `#${a.ticket_number}` }]);
    t.equal((await call(env, 'DELETE', `/tickets/${b.id}/links/${linkId}`, { token: agent.token })).statusCode, 404, 'gone');
  });

  t.same(env.guard.violations, []);
});

t.test('collaborators', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const colleague = await userFixture(env, tenant.id, 'customer', 'colleague@example.com');
  const stranger = await userFixture(env, tenant.id, 'customer');
  const otherCustomer = await userFixture(env, other.id, 'customer');
  const ticket = await ticketFixture(env, tenant.id, customer.id);
  const foreign = await ticketFixture(env, other.id, otherCustomer.id);
  const colleagueName = (await env.deps.db('users').where({ tenant_id: tenant.id, id: colleague.id }).first()).name;
  let bare = '';

  await t.test('a user collaborator and a bare email (no user is created)', async (t) => {
    const users = await count(env, 'users', tenant.id);
    const byUser = await call(env, 'POST', `/tickets/${ticket.id}/collaborators`, { token: agent.token, body: { user_id: colleague.id } });
    t.equal(byUser.statusCode, 201, byUser.body);
    t.match(byUser.json(), { ticket_id: ticket.id, user_id: colleague.id, email: 'colleague@example.com', name: colleagueName });
    const byEmail = await call(env, 'POST', `/tickets/${ticket.id}/collaborators`, { token: agent.token, body: { email: 'Boss@Example.org', name: ' The Boss ' } });
    t.equal(byEmail.statusCode, 201, byEmail.body);
    bare = byEmail.json().id;
    t.match(byEmail.json(), { user_id: null, email: 'boss@example.org', name: 'The Boss' });
    const nameless = await call(env, 'POST', `/tickets/${ticket.id}/collaborators`, { token: agent.token, body: { email: 'cc@example.org' } });
    t.equal(nameless.statusCode, 201);
    t.equal(await count(env, 'users', tenant.id), users, 'no user created');

    t.match(await eventsOf(env, tenant.id, ticket.id, 'ticket.collaborator_added'), [
      { from_value: null, to_value: colleagueName, actor_id: agent.id, data: { from: null, to: colleagueName, collaborator: { user_id: colleague.id } } },
      { from_value: null, to_value: 'The Boss', data: { collaborator: { email: 'boss@example.org', user_id: null } } },
      { to_value: 'cc@example.org' },
    ]);
    const list = await call(env, 'GET', `/tickets/${ticket.id}/collaborators`, { token: agent.token });
    t.equal(list.statusCode, 200);
    t.same(list.json().data.map((c: { email: string }) => c.email), ['colleague@example.com', 'boss@example.org', 'cc@example.org']);
    const asRequester = await call(env, 'GET', `/tickets/${ticket.id}/collaborators`, { token: customer.token });
    t.equal(asRequester.statusCode, 200, 'the requester sees the CC list of their ticket');
    t.equal(asRequester.json().meta.total, 3);
    t.equal((await call(env, 'GET', `/tickets/${ticket.id}/collaborators`, { token: stranger.token })).statusCode, 404, "another customer's ticket is not found");
  });

  await t.test("an email of a user of the tenant is stored as that user", async (t) => {
    const res = await call(env, 'POST', `/tickets/${ticket.id}/collaborators`, { token: agent.token, body: { email: 'COLLEAGUE@example.com' } });
    t.equal(res.statusCode, 409, 'already a collaborator as the user');
    t.equal(res.json().code, 'already_exists');
    const strangerEmail = (await env.deps.db('users').where({ tenant_id: tenant.id, id: stranger.id }).first()).email;
    const added = await call(env, 'POST', `/tickets/${ticket.id}/collaborators`, { token: agent.token, body: { email: strangerEmail } });
    t.equal(added.statusCode, 201);
    t.match(added.json(), { user_id: stranger.id });
  });

  await t.test('refusals write nothing', async (t) => {
    const before = { rows: await count(env, 'ticket_collaborators', tenant.id), events: await count(env, 'events', tenant.id) };
    const cases: Array<[unknown, number, string, string?]> = [
      [{ user_id: colleague.id }, 409, 'already_exists', 'user_id'],
      [{ email: 'boss@example.org' }, 409, 'already_exists', 'email'],
      [{ user_id: customer.id }, 422, 'validation_failed', 'user_id'],
      [{}, 422, 'validation_failed', 'user_id'],
      [{ user_id: colleague.id, email: 'x@example.org' }, 422, 'validation_failed', 'email'],
      [{ user_id: colleague.id, name: 'Renamed' }, 422, 'validation_failed', 'name'],
      [{ email: 'not an email', name: '   ' }, 422, 'validation_failed'],
      [{ user_id: otherCustomer.id }, 404, 'resource_not_found'],
      [{ user_id: '0190a1b2-0000-7000-8000-0000000000ff' }, 404, 'resource_not_found'],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await call(env, 'POST', `/tickets/${ticket.id}/collaborators`, { token: agent.token, body });
      t.equal(res.statusCode, status, `${JSON.stringify(body)}: ${res.body}`);
      t.equal(res.json().code, code);
      if (field) t.equal(res.json().details?.[0]?.field, field);
    }
    const malformed = await call(env, 'POST', `/tickets/${ticket.id}/collaborators`, { token: agent.token, body: { email: 'not an email', name: '   ' } });
    t.same(malformed.json().details.map((d: { field: string }) => d.field).sort(), ['email', 'name']);
    t.equal((await call(env, 'POST', `/tickets/${foreign.id}/collaborators`, { token: agent.token, body: { email: 'a@example.org' } })).statusCode, 404);
    const closed = await ticketFixture(env, tenant.id, customer.id, { status: 'closed' });
    const onClosed = await call(env, 'POST', `/tickets/${closed.id}/collaborators`, { token: agent.token, body: { email: 'a@example.org' } });
    t.equal(onClosed.statusCode, 409, 'closed is final');
    t.match(onClosed.json(), { code: 'conflict', details: { reason: 'ticket_closed' } });
    t.equal((await call(env, 'POST', `/tickets/${ticket.id}/collaborators`, { token: customer.token, body: { email: 'a@example.org' } })).statusCode, 403);
    t.same({ rows: await count(env, 'ticket_collaborators', tenant.id), events: await count(env, 'events', tenant.id) }, before);
  });

  await t.test('DELETE by user id, or by collaborator id for a bare email', async (t) => {
    t.equal((await call(env, 'DELETE', `/tickets/${ticket.id}/collaborators/${colleague.id}`, { token: agent.token })).statusCode, 204);
    t.equal((await call(env, 'DELETE', `/tickets/${ticket.id}/collaborators/${bare}`, { token: agent.token })).statusCode, 204);
    t.equal((await call(env, 'DELETE', `/tickets/${ticket.id}/collaborators/${bare}`, { token: agent.token })).statusCode, 404, 'gone');
    t.equal((await call(env, 'DELETE', `/tickets/${foreign.id}/collaborators/${otherCustomer.id}`, { token: agent.token })).statusCode, 404);
    t.equal((await call(env, 'DELETE', `/tickets/${ticket.id}/collaborators/${stranger.id}`, { token: customer.token })).statusCode, 403);
    t.match(await eventsOf(env, tenant.id, ticket.id, 'ticket.collaborator_removed'), [
      { from_value: colleagueName, to_value: null, data: { from: colleagueName, to: null } },
      { from_value: 'The Boss', to_value: null },
    ]);
    t.same((await call(env, 'GET', `/tickets/${ticket.id}/collaborators`, { token: agent.token })).json().data.map((c: { email: string }) => c.email).length, 2);
  });

  await t.test('an API key without tickets:write is refused', async (t) => {
    const key = await apiKeyFixture(env, tenant.id, tenant.admin.id, ['tickets:read']);
    const res = await call(env, 'POST', `/tickets/${ticket.id}/collaborators`, { token: key.key, body: { email: 'k@example.org' } });
    t.equal(res.statusCode, 403);
    t.equal(res.json().code, 'insufficient_scope');
  });

  t.same(env.guard.violations, []);
});
