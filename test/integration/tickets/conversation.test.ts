import t from 'tap';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { ticketFixture } from '../../helpers/conversation.js';

// CONTRACT §5's message, plus `delivery` (CONTRACT §17: null on channels without delivery).
const MESSAGE_FIELDS = ['id', 'ticket_id', 'body', 'body_html', 'is_private', 'author_id', 'author_name', 'is_agent', 'channel', 'attachments', 'delivery', 'created_at'].sort();

const ticketRow = (env: TestEnv, tenantId: string, id: string) => env.deps.db('tickets').where({ tenant_id: tenantId, id }).first();
const statusKey = async (env: TestEnv, tenantId: string, id: string) =>
  (await env.deps.db('tickets').join('statuses', function () {
    this.on('statuses.tenant_id', 'tickets.tenant_id').andOn('statuses.id', 'tickets.status_id');
  }).where({ 'tickets.tenant_id': tenantId, 'tickets.id': id }).first('statuses.key')).key as string;
const messageCount = async (env: TestEnv, tenantId: string, ticketId: string) =>
  Number((await env.deps.db('messages').where({ tenant_id: tenantId, ticket_id: ticketId }).count({ n: '*' }))[0]!.n);
const eventsOf = (env: TestEnv, tenantId: string, ticketId: string, type: string) =>
  env.deps.db('events').where({ tenant_id: tenantId, ticket_id: ticketId, type }).orderBy('created_at');

t.test('conversation', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const stranger = await userFixture(env, tenant.id, 'customer');
  const otherCustomer = await userFixture(env, other.id, 'customer');

  await t.test('a public staff reply: 201 with the message, the event, and the first response stamped once', async (t) => {
    const ticket = await ticketFixture(env, tenant.id, customer.id);
    const res = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body: 'We are on it.' } });
    t.equal(res.statusCode, 201, res.body);
    const message = res.json();
    t.same(Object.keys(message).sort(), MESSAGE_FIELDS);
    t.match(message, {
      ticket_id: ticket.id, body: 'We are on it.', body_html: null, is_private: false, author_id: agent.id, is_agent: true, channel: 'api', attachments: [],
    });
    t.match(message.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const first = (await ticketRow(env, tenant.id, ticket.id)).first_responded_at as Date;
    t.ok(first, 'first_responded_at is set');

    const [event] = await eventsOf(env, tenant.id, ticket.id, 'ticket.message_created');
    t.match(event, { actor_id: agent.id, subject_type: 'ticket' });
    t.same(event.data, {
      ticket_id: ticket.id, ticket_number: ticket.ticket_number, message_id: message.id, author_id: agent.id, author_name: message.author_name,
      is_agent: true, is_private: false, body: 'We are on it.', body_html: null,
    });

    const again = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: tenant.admin.token, body: { body: 'Still on it.' } });
    t.equal(again.statusCode, 201);
    t.same((await ticketRow(env, tenant.id, ticket.id)).first_responded_at, first, 'a later reply does not move the first response');
  });

  await t.test('a private note and a customer message are no first response', async (t) => {
    const ticket = await ticketFixture(env, tenant.id, customer.id);
    t.equal((await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body: 'Internal: check logs', is_private: true } })).statusCode, 201);
    t.equal((await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: customer.token, body: { body: 'Any news?' } })).statusCode, 201);
    t.equal((await ticketRow(env, tenant.id, ticket.id)).first_responded_at, null);
  });

  await t.test('customers never see private notes; staff see everything, oldest first', async (t) => {
    const ticket = await ticketFixture(env, tenant.id, customer.id);
    for (const [token, body] of [[customer.token, { body: 'Hello' }], [agent.token, { body: 'Note to self', is_private: true }], [agent.token, { body: 'Hi there' }]] as const) {
      t.equal((await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token, body })).statusCode, 201);
    }
    const staff = await call(env, 'GET', `/tickets/${ticket.id}/messages`, { token: agent.token });
    t.equal(staff.statusCode, 200);
    t.same(staff.json().data.map((m: { body: string }) => m.body), ['Hello', 'Note to self', 'Hi there']);
    t.match(staff.json().meta, { page: 1, page_size: 20, total: 3, next_cursor: null });
    const mine = await call(env, 'GET', `/tickets/${ticket.id}/messages`, { token: customer.token });
    t.equal(mine.statusCode, 200);
    t.same(mine.json().data.map((m: { body: string }) => m.body), ['Hello', 'Hi there']);
    t.equal(mine.json().meta.total, 2);
    t.notOk(mine.body.includes('Note to self'), 'the note appears nowhere in the answer');
  });

  await t.test('the message list pages by cursor without repeats', async (t) => {
    const ticket = await ticketFixture(env, tenant.id, customer.id);
    for (let i = 1; i <= 5; i++) await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body: `m${i}` } });
    const seen: string[] = [];
    let cursor = '';
    for (let page = 0; page < 5; page++) {
      const res = await call(env, 'GET', `/tickets/${ticket.id}/messages`, { token: agent.token, query: { page_size: '2', cursor } });
      t.equal(res.statusCode, 200, res.body);
      seen.push(...res.json().data.map((m: { body: string }) => m.body));
      t.notOk('total' in res.json().meta, 'no total on cursor pages');
      cursor = res.json().meta.next_cursor;
      if (!cursor) break;
    }
    t.same(seen, ['m1', 'm2', 'm3', 'm4', 'm5']);
    const bad = await call(env, 'GET', `/tickets/${ticket.id}/messages`, { token: agent.token, query: { cursor: 'garbage!' } });
    t.equal(bad.statusCode, 422);
  });

  await t.test('a customer may not write a private note: 403, nothing written', async (t) => {
    const ticket = await ticketFixture(env, tenant.id, customer.id);
    const res = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: customer.token, body: { body: 'psst', is_private: true } });
    t.equal(res.statusCode, 403);
    t.equal(res.json().code, 'forbidden');
    t.equal(await messageCount(env, tenant.id, ticket.id), 0);
  });

  await t.test("other customers' tickets, other tenants' tickets, unknown and malformed ids are 404", async (t) => {
    const ticket = await ticketFixture(env, tenant.id, customer.id);
    const foreign = await ticketFixture(env, other.id, otherCustomer.id);
    const cases: Array<[string, string, string]> = [
      ['a stranger customer', stranger.token, ticket.id],
      ['another tenant', tenant.admin.token, foreign.id],
      ['an unknown id', agent.token, '0190a1b2-0000-7000-8000-000000000001'],
      ['a malformed id', agent.token, 'not-a-uuid'],
    ];
    for (const [label, token, id] of cases) {
      const post = await call(env, 'POST', `/tickets/${id}/messages`, { token, body: { body: 'hi' } });
      t.equal(post.statusCode, 404, `POST as ${label}`);
      t.equal(post.json().code, 'resource_not_found');
      const list = await call(env, 'GET', `/tickets/${id}/messages`, { token });
      t.equal(list.statusCode, 404, `GET as ${label}`);
    }
    t.equal(await messageCount(env, tenant.id, ticket.id), 0);
    t.equal(await messageCount(env, other.id, foreign.id), 0);
  });

  await t.test('a closed ticket is final: 409, nothing written', async (t) => {
    const ticket = await ticketFixture(env, tenant.id, customer.id, 'closed');
    for (const token of [agent.token, customer.token]) {
      const res = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token, body: { body: 'reopen please' } });
      t.equal(res.statusCode, 409);
      t.match(res.json(), { code: 'conflict', details: { reason: 'ticket_closed' } });
    }
    t.equal(await messageCount(env, tenant.id, ticket.id), 0);
    t.equal((await env.deps.db('events').where({ tenant_id: tenant.id, ticket_id: ticket.id })).length, 0);
  });

  await t.test('a customer reply reopens a resolved ticket, recording the status change', async (t) => {
    const ticket = await ticketFixture(env, tenant.id, customer.id, 'resolved');
    const res = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: customer.token, body: { body: 'It broke again' } });
    t.equal(res.statusCode, 201);
    t.equal(await statusKey(env, tenant.id, ticket.id), 'open');
    t.equal((await ticketRow(env, tenant.id, ticket.id)).resolved_at, null, 'resolved_at cleared');
    const [changed] = await eventsOf(env, tenant.id, ticket.id, 'ticket.status_changed');
    t.match(changed, { from_value: 'Resolved', to_value: 'Open', actor_id: customer.id });
    t.match(changed.data, { ticket_id: ticket.id, from: 'Resolved', to: 'Open', actor_id: customer.id });
  });

  await t.test('a staff reply leaves a resolved ticket resolved', async (t) => {
    const ticket = await ticketFixture(env, tenant.id, customer.id, 'resolved');
    t.equal((await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body: 'Glad it works' } })).statusCode, 201);
    t.equal(await statusKey(env, tenant.id, ticket.id), 'resolved');
  });

  await t.test('a customer reply moves a ticket in a pausing status to open', async (t) => {
    for (const key of ['pending', 'waiting_on_vendor']) {
      const ticket = await ticketFixture(env, tenant.id, customer.id, key);
      t.equal((await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: customer.token, body: { body: 'Here is the info' } })).statusCode, 201);
      t.equal(await statusKey(env, tenant.id, ticket.id), 'open', key);
    }
    const fresh = await ticketFixture(env, tenant.id, customer.id, 'new');
    await call(env, 'POST', `/tickets/${fresh.id}/messages`, { token: customer.token, body: { body: 'More' } });
    t.equal(await statusKey(env, tenant.id, fresh.id), 'new', 'a status that does not pause stays');
    const pending = await ticketFixture(env, tenant.id, customer.id, 'pending');
    await call(env, 'POST', `/tickets/${pending.id}/messages`, { token: agent.token, body: { body: 'Waiting for you' } });
    t.equal(await statusKey(env, tenant.id, pending.id), 'pending', 'a staff reply does not move it');
  });

  await t.test('HTML bodies are sanitised, and the text derived when only HTML is sent', async (t) => {
    const ticket = await ticketFixture(env, tenant.id, customer.id);
    const html = '<p>Hello <b>there</b> &amp; welcome</p><script>alert(1)</script><p onclick="x()">Line<br>two <a href="javascript:alert(1)">bad</a> <a href="https://example.com">good</a></p><img src="x" onerror="alert(1)">';
    const res = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body_html: html } });
    t.equal(res.statusCode, 201, res.body);
    const message = res.json();
    t.notMatch(message.body_html, /script|onclick|onerror|javascript:/);
    t.match(message.body_html, /<b>there<\/b>/);
    t.match(message.body_html, /<a href="https:\/\/example.com" target="_blank" rel="noopener noreferrer nofollow">good<\/a>/);
    t.equal(message.body, 'Hello there & welcome\nLine\ntwo bad good');

    const both = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body: 'Plain', body_html: '<i>Rich</i>' } });
    t.match(both.json(), { body: 'Plain', body_html: '<i>Rich</i>' });
    const [event] = (await eventsOf(env, tenant.id, ticket.id, 'ticket.message_created')).slice(-1);
    t.match(event.data, { body: 'Plain', body_html: '<i>Rich</i>' });
  });

  await t.test('bad bodies: one problem per field, nothing written', async (t) => {
    const ticket = await ticketFixture(env, tenant.id, customer.id);
    const cases: Array<[unknown, string]> = [
      [{}, 'body'],
      [{ body_html: '<script>only()</script>' }, 'body_html'],
      [{ body: '   ' }, 'body'],
      [{ body: 'x'.repeat(100_001) }, 'body'],
      [{ body: 'ok', is_private: 'yes' }, 'is_private'],
      [{ body: 'ok', author_id: agent.id }, 'author_id'],
      [{ body: 'a\u0000b' }, 'body'],
    ];
    for (const [body, field] of cases) {
      const res = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body });
      t.equal(res.statusCode, 422, `${JSON.stringify(body).slice(0, 60)}: ${res.body.slice(0, 200)}`);
      t.equal(res.json().details[0].field, field);
    }
    t.equal(await messageCount(env, tenant.id, ticket.id), 0);
    t.equal((await ticketRow(env, tenant.id, ticket.id)).first_responded_at, null);
  });

  await t.test('the timeline: events oldest first, with actor names; staff only', async (t) => {
    const ticket = await ticketFixture(env, tenant.id, customer.id, 'resolved');
    await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: customer.token, body: { body: 'Broken again' } });
    await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body: 'Looking', is_private: true } });
    const res = await call(env, 'GET', `/tickets/${ticket.id}/events`, { token: agent.token });
    t.equal(res.statusCode, 200, res.body);
    const events = res.json().data;
    t.same(events.map((e: { type: string }) => e.type), ['message_created', 'status_changed', 'message_created']);
    t.same(Object.keys(events[0]).sort(), ['actor_id', 'actor_name', 'created_at', 'data', 'from', 'id', 'to', 'type']);
    t.match(events[1], { from: 'Resolved', to: 'Open', actor_id: customer.id, actor_name: String });
    t.match(events[2], { from: null, to: null, actor_id: agent.id, data: { is_private: true, body: 'Looking' } });
    t.match(res.json().meta, { total: 3, next_cursor: null });

    const paged = await call(env, 'GET', `/tickets/${ticket.id}/events`, { token: agent.token, query: { page_size: '2' } });
    t.equal(paged.json().data.length, 2);
    const rest = await call(env, 'GET', `/tickets/${ticket.id}/events`, { token: agent.token, query: { cursor: paged.json().meta.next_cursor } });
    t.same(rest.json().data.map((e: { id: string }) => e.id), [events[2].id]);

    const asCustomer = await call(env, 'GET', `/tickets/${ticket.id}/events`, { token: customer.token });
    t.equal(asCustomer.statusCode, 403);
    const foreign = await call(env, 'GET', `/tickets/${ticket.id}/events`, { token: other.admin.token });
    t.equal(foreign.statusCode, 404);
  });

  await t.test("a plain reply is written by its event's statement; one with HTML before its event", async (t) => {
    const ticket = await ticketFixture(env, tenant.id, customer.id);
    const before = await messageCount(env, tenant.id, ticket.id);
    const statements: string[] = [];
    const listener = (q: { sql: string }) => { statements.push(q.sql); };
    env.deps.db.on('query', listener);
    const plain = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body: 'Plain and simple.' } });
    env.deps.db.removeListener('query', listener);
    t.equal(plain.statusCode, 201, plain.body);
    const plainInserts = statements.filter((sql) => /insert into "messages"/.test(sql));
    t.equal(plainInserts.length, 1, 'the message is inserted once');
    t.match(plainInserts[0], /insert into "events"/, "by the statement that records its event");
    const stored = await env.deps.db('messages').where({ tenant_id: tenant.id, id: plain.json().id }).first();
    t.match(stored, { body: 'Plain and simple.', body_html: null, author_id: agent.id, is_agent: true, is_private: false, channel: 'api', delivery: null });
    t.equal(stored.created_at.toISOString(), plain.json().created_at, 'the answer is the stored row');
    const [event] = await eventsOf(env, tenant.id, ticket.id, 'ticket.message_created');
    t.equal(event.data.message_id, plain.json().id, 'the event names it');

    statements.length = 0;
    env.deps.db.on('query', listener);
    const html = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body_html: '<p>Rich <b>text</b></p>' } });
    env.deps.db.removeListener('query', listener);
    t.equal(html.statusCode, 201, html.body);
    const htmlInsert = statements.findIndex((sql) => /^insert into "messages"/.test(sql));
    const eventInsert = statements.findIndex((sql) => /insert into "events"/.test(sql));
    t.ok(htmlInsert >= 0 && htmlInsert < eventInsert, 'a message with HTML has its own statement, before its event');
    t.notMatch(statements[eventInsert], /insert into "messages"/);
    t.equal(await messageCount(env, tenant.id, ticket.id), before + 2, 'both replies, once each');
  });

  t.same(env.guard.violations, [], 'every query named its tenant');
});
