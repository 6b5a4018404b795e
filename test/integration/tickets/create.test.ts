import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { count, openTicket } from '../../helpers/tickets.js';

/** POST /tickets and GET /tickets/{id} (CONTRACT §5 Ticket). */

const TICKET_FIELDS = [
  'id', 'ticket_number', 'subject', 'status_id', 'priority_id', 'type_id', 'requester_id', 'assigned_agent_id', 'team_id',
  'organization_id', 'channel', 'tags', 'custom_fields', 'summary', 'resolution_code', 'sla_due_at', 'sla', 'first_responded_at',
  'resolved_at', 'closed_at', 'snoozed_until', 'merged_into_id', 'csat', 'created_at', 'updated_at',
].sort();

t.test('creating tickets', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const otherCustomer = await userFixture(env, tenant.id, 'customer');
  const foreignCustomer = await userFixture(env, other.id, 'customer');
  const foreignAgent = await userFixture(env, other.id, 'agent');
  const statuses = (await call(env, 'GET', '/meta/statuses', { token: admin })).json().data;
  const priorities = (await call(env, 'GET', '/meta/priorities', { token: admin })).json().data;
  const foreignPriority = (await call(env, 'GET', '/meta/priorities', { token: other.admin.token })).json().data[0];
  const foreignType = (await call(env, 'POST', '/ticket-types', { token: other.admin.token, body: { name: 'Theirs' } })).json();
  const type = (await call(env, 'POST', '/ticket-types', { token: admin, body: { name: 'Question' } })).json();
  const retired = (await call(env, 'POST', '/ticket-types', { token: admin, body: { name: 'Old', active: false } })).json();
  for (const body of [
    { key: 'serial', label: 'Serial', kind: 'text' },
    { key: 'plan', label: 'Plan', kind: 'select', options: ['free', 'pro'] },
    { key: 'urgent_flag', label: 'Urgent?', kind: 'bool' },
    { key: 'purchased', label: 'Purchased', kind: 'date' },
  ]) t.equal((await call(env, 'POST', '/custom-fields', { token: admin, body })).statusCode, 201);

  await t.test('staff open a ticket for a new requester by email: defaults, first message, events', async (t) => {
    const res = await call(env, 'POST', '/tickets', {
      token: agent.token,
      body: {
        subject: ' Printer on fire ', body: 'Smoke everywhere', body_html: '<p onclick="steal()">Smoke <b>everywhere</b><script>alert(1)</script><a href="javascript:x()">x</a></p>',
        requester: { email: 'Pat@Example.com', name: 'Pat Doe' }, tags: ['Hardware', 'hardware', ' fire '],
        serial: 'SN-1', custom_fields: { plan: 'pro', urgent_flag: true, purchased: '2024-02-29' },
      },
    });
    t.equal(res.statusCode, 201, res.body);
    const ticket = res.json();
    t.same(Object.keys(ticket).sort(), TICKET_FIELDS);
    t.match(ticket, {
      subject: 'Printer on fire', channel: 'api', tags: ['hardware', 'fire'], assigned_agent_id: null, type_id: null,
      status_id: statuses.find((s: { key: string }) => s.key === 'new').id,
      priority_id: priorities.find((p: { key: string }) => p.key === 'normal').id,
      custom_fields: { serial: 'SN-1', plan: 'pro', urgent_flag: true, purchased: '2024-02-29' },
      // The SLA clock (a lifecycle hook) has run in the create's transaction.
      sla: { paused: false, first_response: { status: 'active' }, next_response: { status: 'none' }, resolution: { status: 'active' } },
    });
    t.equal(ticket.sla_due_at, ticket.sla.resolution.due_at);
    t.match(ticket.sla_due_at, /Z$/);
    const requester = await env.deps.db('users').where({ tenant_id: tenant.id, id: ticket.requester_id }).first();
    t.match(requester, { email: 'pat@example.com', name: 'Pat Doe', role: 'customer' });

    const [message] = await env.deps.db('messages').where({ tenant_id: tenant.id, ticket_id: ticket.id });
    t.match(message, { body: 'Smoke everywhere', is_private: false, author_id: requester.id, author_name: 'Pat Doe', is_agent: false, channel: 'api' });
    t.notMatch(message.body_html, /script|onclick|javascript/, 'HTML sanitised');
    t.match(message.body_html, /<b>everywhere<\/b>/);

    const events = await env.deps.db('events').where({ tenant_id: tenant.id }).whereIn('type', ['customer.created', 'ticket.created']).orderBy('created_at');
    t.match(events.find((e) => e.type === 'customer.created'), { subject_id: requester.id, data: { email: 'pat@example.com', name: 'Pat Doe' } });
    t.match(events.find((e) => e.type === 'ticket.created'), {
      ticket_id: ticket.id, actor_id: agent.id,
      data: {
        ticket_id: ticket.id, subject: 'Printer on fire', requester_id: requester.id, requester_name: 'Pat Doe', requester_email: 'pat@example.com',
        organization_name: null, team_id: null, team_name: null, assignee_name: null, priority: 'normal', channel: 'api', sla_due_at: ticket.sla_due_at,
        body: 'Smoke everywhere', body_html: message.body_html,
      },
    });

    // The same email again finds the customer: no second user, no second customer.created.
    const again = await openTicket(env, admin, { requester: { email: 'pat@EXAMPLE.com' } });
    t.equal(again.requester_id, requester.id);
    t.equal((await env.deps.db('events').where({ tenant_id: tenant.id, type: 'customer.created' })).length, 1);
  });

  await t.test('staff set priority, type, assignee, team, channel; GET answers the same ticket', async (t) => {
    const teamId = (await call(env, 'POST', '/teams', { token: admin, body: { name: 'Hardware' } })).json().id;
    const ticket = await openTicket(env, admin, {
      requester_id: customer.id, priority_id: priorities[0].id, type_id: type.id, assigned_agent_id: agent.id, team_id: teamId, channel: 'email',
    });
    t.match(ticket, { priority_id: priorities[0].id, type_id: type.id, assigned_agent_id: agent.id, team_id: teamId, channel: 'email', requester_id: customer.id });
    const got = await call(env, 'GET', `/tickets/${ticket.id}`, { token: agent.token });
    t.same(got.json(), ticket);
    const created = await env.deps.db('events').where({ tenant_id: tenant.id, ticket_id: ticket.id, type: 'ticket.created' }).first();
    const agentName = (await env.deps.db('users').where({ tenant_id: tenant.id, id: agent.id }).first()).name;
    t.match(created.data, { priority: 'urgent', assignee_name: agentName, team_id: teamId, team_name: 'Hardware' });
  });

  await t.test('ticket numbers: a per-tenant sequence, distinct under concurrent creates', async (t) => {
    const fresh = await tenantFixture(env);
    const freshCustomer = await userFixture(env, fresh.id, 'customer');
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) =>
      call(env, 'POST', '/tickets', { token: fresh.admin.token, body: { subject: `c${i}`, body: 'b', requester_id: freshCustomer.id } })));
    t.same(results.map((r) => r.statusCode), Array(12).fill(201));
    const numbers = results.map((r) => r.json().ticket_number).sort((a, b) => a - b);
    t.same(numbers, Array.from({ length: 12 }, (_, i) => i + 1), '1..12, no duplicates, no gaps');
    const refused = await call(env, 'POST', '/tickets', { token: fresh.admin.token, body: { subject: 'x', body: 'b', requester_id: freshCustomer.id, plan: 'gold' } });
    t.equal(refused.statusCode, 422, 'a create refused by validation');
    const next = await call(env, 'POST', '/tickets', { token: fresh.admin.token, body: { subject: 'c13', body: 'b', requester_id: freshCustomer.id } });
    t.equal(next.json().ticket_number, 13, 'drew no number: validation runs before the insert that draws it');
    const event = await env.deps.db('events').where({ tenant_id: fresh.id, ticket_id: next.json().id, type: 'ticket.created' }).first();
    t.equal(event.data.ticket_number, 13, 'the event carries the number the insert drew');
    t.equal((await call(env, 'POST', '/tickets', { token: other.admin.token, body: { subject: 'o', body: 'b', requester_id: foreignCustomer.id } })).statusCode, 201);
    t.equal((await call(env, 'POST', '/tickets', { token: fresh.admin.token, body: { subject: 'c14', body: 'b', requester_id: freshCustomer.id } })).json().ticket_number, 14,
      "another tenant's creates take nothing from this tenant's sequence");
  });

  await t.test("ticket number sequences follow their tenants, and an import's reserve waits for numbers being drawn", async (t) => {
    const db = env.deps.db;
    const sequence = async (id: string) => (await db.raw('SELECT to_regclass(?) AS r', [`ticket_numbers."${id}"`])).rows[0].r;
    const id = '0190a1b2-0000-7000-8000-00000000abcd';
    const stamps = { created_at: new Date(), updated_at: new Date() };
    await db('tenants').insert({ id, slug: 'numbers-follow', name: 'Numbers', ...stamps });
    t.ok(await sequence(id), 'created with the tenant');
    const next = async () => Number((await db.raw('SELECT nextval(?::regclass) AS n', [`ticket_numbers."${id}"`])).rows[0].n);
    t.equal(await next(), 1, 'starting at 1');

    // A transaction that drew a number and has not ended yet: the reserve waits for it, so it
    // never sets the sequence below a number already handed out.
    const drawing = await db.transaction();
    t.equal(Number((await drawing.raw('SELECT nextval(?::regclass) AS n', [`ticket_numbers."${id}"`])).rows[0].n), 2);
    let reserved = false;
    const reserve = db.transaction(async (trx) => {
      await trx.raw('SELECT ticket_numbers_reserve_through(?, ?)', [id, 1]);
      reserved = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.notOk(reserved, 'the reserve waits while a transaction that drew a number is open');
    await drawing.commit();
    await reserve;
    t.equal(await next(), 3, 'a reserve below the last number drawn moves nothing back');
    await db.transaction(async (trx) => { await trx.raw('SELECT ticket_numbers_reserve_through(?, ?)', [id, 500]); });
    t.equal(await next(), 501, 'a reserve above it: the next number follows the reserved ones');

    await db('tenants').where({ id }).delete();
    t.equal(await sequence(id), null, 'dropped with the tenant');
  });

  await t.test('customers open tickets for themselves only, without staff fields', async (t) => {
    const own = await call(env, 'POST', '/tickets', { token: customer.token, body: { subject: 'Mine', body: 'b', plan: 'free' } });
    t.equal(own.statusCode, 201, own.body);
    t.equal(own.json().requester_id, customer.id);
    const named = await call(env, 'POST', '/tickets', { token: customer.token, body: { subject: 'Mine', body: 'b', requester_id: customer.id } });
    t.equal(named.statusCode, 201);

    const before = await count(env, 'tickets', tenant.id);
    for (const body of [
      { requester_id: otherCustomer.id },
      { requester: { email: 'someone.else@example.com' } },
      { priority_id: priorities[0].id },
      { assigned_agent_id: agent.id },
      { tags: ['vip'] },
    ]) {
      const res = await call(env, 'POST', '/tickets', { token: customer.token, body: { subject: 's', body: 'b', ...body } });
      t.equal(res.statusCode, 403, JSON.stringify(body));
      t.equal(res.json().code, 'forbidden');
    }
    t.equal(await count(env, 'tickets', tenant.id), before, 'nothing written');
    t.equal(await env.deps.db('users').where({ tenant_id: tenant.id, email: 'someone.else@example.com' }).first(), undefined);
  });

  await t.test('bad input: each problem named, nothing half-written', async (t) => {
    const tickets = await count(env, 'tickets', tenant.id);
    const users = await count(env, 'users', tenant.id);
    const events = await count(env, 'events', tenant.id);
    const problems = async (body: Record<string, unknown>) => {
      const res = await call(env, 'POST', '/tickets', { token: admin, body: { subject: 's', body: 'b', ...body } });
      t.equal(res.statusCode, 422, `${JSON.stringify(body)} → ${res.body}`);
      t.equal(res.json().code, 'validation_failed');
      return Object.fromEntries(res.json().details.map((d: { field: string; message: string }) => [d.field, d.message]));
    };
    t.same(await problems({}), { requester_id: 'is required (or requester with an email)' });
    t.same(await problems({ requester_id: foreignCustomer.id }), { requester_id: 'does not exist' }, "another tenant's user");
    t.same(await problems({ requester_id: customer.id, requester: { email: 'x@example.com' } }), { requester: 'cannot be combined with requester_id' });
    t.same(await problems({
      requester: { email: 'new.person@example.com' },
      priority_id: foreignPriority.id, type_id: foreignType.id, assigned_agent_id: foreignAgent.id,
    }), { priority_id: 'does not exist', type_id: 'does not exist', assigned_agent_id: 'does not exist' });
    t.same(await problems({ requester_id: customer.id, type_id: retired.id, assigned_agent_id: customer.id }),
      { type_id: 'is an inactive ticket type', assigned_agent_id: 'is not an agent or admin' });
    t.same(await problems({
      requester_id: customer.id, serial: 42, colour: 'red',
      custom_fields: { plan: 'gold', urgent_flag: 'yes', purchased: '2023-02-29' },
    }), {
      'custom_fields.serial': 'must be a string', 'custom_fields.colour': 'is not a custom field', 'custom_fields.plan': 'must be one of free, pro',
      'custom_fields.urgent_flag': 'must be true or false', 'custom_fields.purchased': 'must be a date YYYY-MM-DD',
    });
    // Schema-level: missing subject, oversized body, unknown channel, a non-uuid requester.
    const schema = await call(env, 'POST', '/tickets', { token: admin, body: { body: 'x'.repeat(100_001), channel: 'fax', requester_id: 'abc', 'Not-A-Key': 1 } });
    t.equal(schema.statusCode, 422);
    t.same(schema.json().details.map((d: { field: string }) => d.field).sort(), ['Not-A-Key', 'body', 'channel', 'requester_id', 'subject']);
    t.equal(await count(env, 'tickets', tenant.id), tickets, 'no ticket');
    t.equal(await count(env, 'users', tenant.id), users, 'no customer created by a refused request');
    t.equal(await count(env, 'events', tenant.id), events, 'no event');
  });

  await t.test('a required custom field must be given on create', async (t) => {
    const field = (await call(env, 'POST', '/custom-fields', { token: admin, body: { key: 'asset_tag', label: 'Asset tag', kind: 'text', required: true } })).json();
    const res = await call(env, 'POST', '/tickets', { token: admin, body: { subject: 's', body: 'b', requester_id: customer.id } });
    t.equal(res.statusCode, 422);
    t.same(res.json().details, [{ field: 'custom_fields.asset_tag', message: 'is required' }]);
    t.equal((await call(env, 'POST', '/tickets', { token: admin, body: { subject: 's', body: 'b', requester_id: customer.id, asset_tag: 'A-1' } })).statusCode, 201);
    await call(env, 'PATCH', `/custom-fields/${field.id}`, { token: admin, body: { required: false } });
  });

  await t.test('GET /tickets/{id}: customers see their own only; other tenants 404', async (t) => {
    const mine = await openTicket(env, customer.token, {});
    const theirs = await openTicket(env, admin, { requester_id: otherCustomer.id });
    t.equal((await call(env, 'GET', `/tickets/${mine.id}`, { token: customer.token })).statusCode, 200);
    const hidden = await call(env, 'GET', `/tickets/${theirs.id}`, { token: customer.token });
    t.equal(hidden.statusCode, 404);
    t.equal(hidden.json().code, 'resource_not_found');
    t.equal((await call(env, 'GET', `/tickets/${mine.id}`, { token: other.admin.token })).statusCode, 404);
    t.equal((await call(env, 'GET', '/tickets/0190a1b2-0000-7000-8000-000000000000', { token: admin })).statusCode, 404);
  });

  await t.test('a create by requester id: the requester read pins the configuration, the ticket insert writes the first message', async (t) => {
    await openTicket(env, admin, { requester_id: customer.id }); // the configuration cache filled
    const statements: string[] = [];
    const listener = (q: { sql: string }) => { statements.push(q.sql); };
    env.deps.db.on('query', listener);
    const ticket = await openTicket(env, admin, { requester_id: customer.id, body: 'One statement for both' });
    env.deps.db.removeListener('query', listener);
    const requesterRead = statements.filter((sql) => /from "users"/.test(sql));
    t.equal(requesterRead.length, 1, 'one read of the requester');
    t.match(requesterRead[0], /config_version_for_write\(\$\d+\)/, 'which also pins the configuration version, under its lock');
    t.notOk(statements.some((sql) => /^SELECT config_version_for_write/.test(sql)), 'no statement of its own for the version');
    const messageInserts = statements.filter((sql) => /insert into "messages"/.test(sql));
    t.equal(messageInserts.length, 1, 'the first message is inserted once');
    t.match(messageInserts[0], /insert into "tickets"/, 'by the statement that inserts the ticket');
    t.match(messageInserts[0], /nextval\(\$\d+::regclass\)/, 'which also draws the ticket number');
    t.notOk(statements.some((sql) => /nextval|ticket_counters/.test(sql) && !/insert into "tickets"/.test(sql)), 'no statement of its own for the number');
    t.notOk(statements.some((sql) => /from "custom_fields"/.test(sql)), 'the custom field definitions come from the configuration cache');
    const messages = await env.deps.db('messages').where({ tenant_id: tenant.id, ticket_id: ticket.id });
    t.match(messages, [{ body: 'One statement for both', author_id: customer.id, is_agent: false, is_private: false }], 'and it is there');
  });

  await t.test('the event and the mail rows go with the COMMIT: when one fails, the whole write is undone', async (t) => {
    // The event's INSERT (with its first message, deliveries) and the notification's are held and
    // sent with the COMMIT (src/db/write-behind.ts); a refusal there must leave nothing behind.
    const db = env.deps.db;
    await db.raw(`ALTER TABLE events ADD CONSTRAINT test_refused CHECK (coalesce(data->>'subject', data->>'body', '') <> 'refused at commit') NOT VALID`);
    t.teardown(() => db.raw('ALTER TABLE events DROP CONSTRAINT IF EXISTS test_refused'));
    const before = { tickets: await count(env, 'tickets', tenant.id), messages: await count(env, 'messages', tenant.id), notifications: await count(env, 'notifications', tenant.id) };
    const refused = await call(env, 'POST', '/tickets', { token: admin, body: { subject: 'refused at commit', body: 'x', requester_id: customer.id } });
    t.equal(refused.statusCode, 500);
    t.equal(refused.json().code, 'internal_error', "the contract's error body");
    t.notMatch(refused.body, /test_refused|violates|insert|at .*\.ts/i, 'neither SQL nor a stack in the answer');

    const ticket = await openTicket(env, admin, { requester_id: customer.id, subject: 'Still works' });
    t.equal((await call(env, 'GET', `/tickets/${ticket.id}`, { token: admin })).statusCode, 200, 'the next create succeeds');
    const updatedAt = (await db('tickets').where({ tenant_id: tenant.id, id: ticket.id }).first()).updated_at;
    const reply = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: admin, body: { body: 'refused at commit' } });
    t.equal(reply.statusCode, 500, 'a reply whose event fails at the COMMIT');
    t.same({
      tickets: await count(env, 'tickets', tenant.id), messages: await count(env, 'messages', tenant.id), notifications: await count(env, 'notifications', tenant.id),
    }, { tickets: before.tickets + 1, messages: before.messages + 1, notifications: before.notifications + (await db('notifications').where({ tenant_id: tenant.id, ticket_id: ticket.id })).length },
    'only the good ticket and its first message were written: nothing of the refused create or reply');
    t.same((await db('tickets').where({ tenant_id: tenant.id, id: ticket.id }).first()).updated_at, updatedAt, "the reply's held ticket UPDATE was undone too");
    t.equal((await db('events').where({ tenant_id: tenant.id }).where('data', '@>', { subject: 'refused at commit' })).length, 0);

    const good = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: admin, body: { body: 'This one is fine' } });
    t.equal(good.statusCode, 201, 'the connections went back clean: the next reply is written');
    t.equal((await db('messages').where({ tenant_id: tenant.id, ticket_id: ticket.id })).length, 2);
  });

  t.same(env.guard.violations, [], 'every query carried tenant_id');
});
