import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { openTicket, vocab } from '../../helpers/tickets.js';

/** Tags, saved filters, macros, canned responses, bulk update and filter values through the API. */

t.test('agent productivity tools', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent');
  const agent2 = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const v = await vocab(env, admin);
  const org = (await call(env, 'POST', '/organizations', { token: admin, body: { name: 'Acme' } })).json();
  t.equal((await call(env, 'PATCH', `/users/${customer.id}/organization`, { token: admin, body: { organization_id: org.id } })).statusCode, 200);
  const foreignTicket = await openTicket(env, other.admin.token, { requester: { email: 'x@other.example.com' } });
  const count = async (table: string) => Number((await env.deps.db(table).where({ tenant_id: tenant.id }).count({ n: '*' }))[0]!.n);
  const events = (ticketId: string, type?: string) => env.deps.db('events').where({ tenant_id: tenant.id, ticket_id: ticketId, ...(type ? { type } : {}) });

  await t.test('tags: CRUD with hex colours, ticket tags, rename and delete reach tickets, profiles', async (t) => {
    const created = await call(env, 'POST', '/tags', { token: agent.token, body: { name: ' Billing ', color: '#1E90FF' } });
    t.equal(created.statusCode, 201, created.body);
    t.match(created.json(), { name: 'billing', color: '#1e90ff' });
    t.equal((await call(env, 'POST', '/tags', { token: agent.token, body: { name: 'BILLING' } })).json().code, 'already_exists');
    for (const color of ['red', '#fff', '#12345g', '1e90ff']) {
      const bad = await call(env, 'POST', '/tags', { token: agent.token, body: { name: 'x', color } });
      t.equal(bad.statusCode, 422, `colour ${color}`);
      t.equal(bad.json().details[0].field, 'color');
    }
    const vip = (await call(env, 'POST', '/tags', { token: agent.token, body: { name: 'vip' } })).json();
    t.equal(vip.color, '#6b7280', 'a default colour');

    const t1 = await openTicket(env, admin, { requester_id: customer.id, tags: ['billing', 'refund'] });
    const t2 = await openTicket(env, admin, { requester_id: customer.id, tags: ['billing'] });
    const put = await call(env, 'PUT', `/tickets/${t2.id}/tags`, { token: agent.token, body: { tags: ['VIP', 'billing', 'vip'] } });
    t.same(put.json(), { tags: ['vip', 'billing'] });
    t.same((await call(env, 'GET', `/tickets/${t2.id}/tags`, { token: agent.token })).json(), { tags: ['vip', 'billing'] });
    t.equal((await call(env, 'GET', `/tickets/${t2.id}/tags`, { token: customer.token })).statusCode, 403, 'tags are staff business');
    t.equal((await call(env, 'PUT', `/tickets/${foreignTicket.id}/tags`, { token: agent.token, body: { tags: ['x'] } })).statusCode, 404);
    t.equal((await call(env, 'PUT', `/tickets/${t2.id}/tags`, { token: agent.token, body: { tags: Array(51).fill('x') } })).statusCode, 422);

    const profile = (await call(env, 'GET', `/users/${customer.id}/tag-profile`, { token: agent.token })).json();
    t.same(profile, { tickets: 2, tags: [
      { name: 'billing', count: 2, share: 1, color: '#1e90ff' }, { name: 'refund', count: 1, share: 0.5, color: null }, { name: 'vip', count: 1, share: 0.5, color: '#6b7280' },
    ] });
    t.equal((await call(env, 'GET', `/organizations/${org.id}/tag-profile`, { token: agent.token })).json().tickets, 2);
    t.equal((await call(env, 'GET', `/users/${foreignTicket.requester_id}/tag-profile`, { token: agent.token })).statusCode, 404);

    const billing = created.json();
    t.equal((await call(env, 'PATCH', `/tags/${billing.id}`, { token: agent.token, body: { name: 'vip' } })).json().code, 'already_exists');
    t.equal((await call(env, 'PATCH', `/tags/${billing.id}`, { token: agent.token, body: { name: 'Invoices' } })).json().name, 'invoices');
    t.same((await call(env, 'GET', `/tickets/${t1.id}`, { token: admin })).json().tags, ['invoices', 'refund'], 'renamed on tickets');
    t.equal((await call(env, 'DELETE', `/tags/${vip.id}`, { token: agent.token })).statusCode, 204);
    t.same((await call(env, 'GET', `/tickets/${t2.id}`, { token: admin })).json().tags, ['invoices'], 'removed from tickets');
    t.same((await call(env, 'GET', '/tags?q=INV', { token: agent.token })).json().data.map((x: { name: string }) => x.name), ['invoices']);
  });

  await t.test('saved filters: per agent, conditions validated like the list, run through the list', async (t) => {
    const urgentTicket = await openTicket(env, admin, { requester_id: customer.id, priority_id: v.priority.urgent, channel: 'email' });
    const bad = await call(env, 'POST', '/saved-filters', { token: agent.token, body: { name: 'Bad', conditions: [{ field: 'priority', operator: 'eq', value: 'meh' }, { field: 'sla', operator: 'eq', value: 1 }] } });
    t.equal(bad.statusCode, 422);
    t.same(bad.json().details.map((d: { field: string }) => d.field), ['conditions.0.value', 'conditions.1.field']);
    t.equal(await count('saved_filters'), 0);
    const created = await call(env, 'POST', '/saved-filters', { token: agent.token, body: { name: 'Urgent', conditions: [{ field: 'priority', operator: 'eq', value: 'urgent' }] } });
    t.equal(created.statusCode, 201, created.body);
    const filter = created.json();
    t.match(filter, { owner_id: agent.id, conditions: [{ field: 'priority', operator: 'eq', value: 'urgent' }] });
    t.equal((await call(env, 'POST', '/saved-filters', { token: agent.token, body: { name: 'urgent', conditions: [] } })).json().code, 'already_exists');
    t.equal((await call(env, 'POST', '/saved-filters', { token: agent2.token, body: { name: 'urgent', conditions: [] } })).statusCode, 201, 'names are per agent');
    t.equal((await call(env, 'GET', '/saved-filters', { token: agent.token })).json().meta.total, 1, 'each sees their own');
    t.equal((await call(env, 'GET', `/saved-filters/${filter.id}`, { token: agent2.token })).statusCode, 404, "another agent's filter is not found");
    t.equal((await call(env, 'PATCH', `/saved-filters/${filter.id}`, { token: agent2.token, body: { name: 'Mine' } })).statusCode, 404);
    const listed = (await call(env, 'GET', `/saved-filters/${filter.id}/tickets`, { token: agent.token })).json();
    t.same(listed.data.map((x: { id: string }) => x.id), [urgentTicket.id]);
    t.equal((await call(env, 'GET', '/saved-filters', { token: customer.token })).statusCode, 403);
    t.equal((await call(env, 'PATCH', `/saved-filters/${filter.id}`, { token: agent.token, body: { conditions: [{ field: 'channel', operator: 'eq', value: 'fax' }] } })).statusCode, 422);
    t.equal((await call(env, 'DELETE', `/saved-filters/${filter.id}`, { token: agent.token })).statusCode, 204);
  });

  await t.test('canned responses: unique shortcut, placeholders checked and rendered', async (t) => {
    const bad = await call(env, 'POST', '/canned-responses', { token: admin, body: { title: 'X', shortcut: 'x', body: 'Hi {{customer.nickname}}' } });
    t.equal(bad.statusCode, 422);
    t.equal(bad.json().details[0].field, 'body');
    t.equal((await call(env, 'POST', '/canned-responses', { token: admin, body: { title: 'X', shortcut: 'Bad Shortcut', body: 'x' } })).statusCode, 422);
    const created = await call(env, 'POST', '/canned-responses', { token: admin, body: { title: 'Refund', shortcut: 'refund', body: 'Hi {{ customer.first_name }}, ticket #{{ticket.number}} ({{ticket.subject}}) of {{organization.name}} is refunded. {{agent.name}}' } });
    t.equal(created.statusCode, 201, created.body);
    t.same(created.json().placeholders, ['customer.first_name', 'ticket.number', 'ticket.subject', 'organization.name', 'agent.name']);
    t.equal((await call(env, 'POST', '/canned-responses', { token: admin, body: { title: 'Again', shortcut: 'refund', body: 'x' } })).json().code, 'already_exists');
    t.equal((await call(env, 'POST', '/canned-responses', { token: agent.token, body: { title: 'Mine', shortcut: 'mine', body: 'x' } })).statusCode, 403, 'agents use them, admins write them');
    const ticket = await openTicket(env, admin, { requester_id: customer.id, subject: 'Double charge' });
    const rendered = await call(env, 'POST', `/canned-responses/${created.json().id}/render`, { token: agent.token, body: { ticket_id: ticket.id } });
    t.equal(rendered.statusCode, 200, rendered.body);
    const customerName = (await env.deps.db('users').where({ tenant_id: tenant.id, id: customer.id }).first()).name.split(' ')[0];
    const agentName = (await env.deps.db('users').where({ tenant_id: tenant.id, id: agent.id }).first()).name;
    t.equal(rendered.json().body, `Hi ${customerName}, ticket #${ticket.ticket_number} (Double charge) of Acme is refunded. ${agentName}`);
    const foreign = await call(env, 'POST', `/canned-responses/${created.json().id}/render`, { token: agent.token, body: { ticket_id: foreignTicket.id } });
    t.equal(foreign.statusCode, 422);
    t.equal(foreign.json().details[0].field, 'ticket_id');
    t.same((await call(env, 'GET', '/canned-responses?q=ref', { token: agent.token })).json().data.map((x: { shortcut: string }) => x.shortcut), ['refund']);
  });

  await t.test('macros: validated actions; apply posts the reply, tags and sets the status, each with its event', async (t) => {
    const bad = await call(env, 'POST', '/macros', { token: admin, body: { name: 'Bad', actions: [{ type: 'set_status', value: 'gone' }, { type: 'post_reply', value: '{{nope}}' }, { type: 'add_tag', value: '' }] } });
    t.equal(bad.statusCode, 422);
    t.same(bad.json().details.map((d: { field: string }) => d.field), ['actions.0.value', 'actions.1.value', 'actions.2.value']);
    const routingAction = await call(env, 'POST', '/macros', { token: admin, body: { name: 'Bad', actions: [{ type: 'set_team', value: 'x' }] } });
    t.equal(routingAction.json().details[0].field, 'actions.0.type', 'routing actions are not macro actions');
    t.equal(await count('macros'), 0);
    const macro = (await call(env, 'POST', '/macros', { token: admin, body: { name: 'Resolve', actions: [
      { type: 'post_reply', value: 'Hi {{customer.first_name}}, #{{ticket.number}} is done.' }, { type: 'add_tag', value: 'Answered' }, { type: 'set_status', value: 'resolved' },
    ] } })).json();
    const ticket = await openTicket(env, admin, { requester_id: customer.id, tags: ['x'] });
    const applied = await call(env, 'POST', `/tickets/${ticket.id}/macros/${macro.id}/apply`, { token: agent.token });
    t.equal(applied.statusCode, 200, applied.body);
    t.match(applied.json(), { status_id: v.status.resolved, tags: ['x', 'answered'] });
    t.ok(applied.json().first_responded_at, 'the reply is the first response');
    const reply = await env.deps.db('messages').where({ tenant_id: tenant.id, ticket_id: ticket.id, is_agent: true }).first();
    t.match(reply, { body: new RegExp(`#${ticket.ticket_number} is done\\.$`), is_private: false, author_id: agent.id });
    t.same((await events(ticket.id)).map((e) => e.type).filter((x) => x !== 'ticket.created').sort(), ['ticket.message_created', 'ticket.status_changed']);
    const closedMacro = (await call(env, 'POST', '/macros', { token: admin, body: { name: 'Close', actions: [{ type: 'set_status', value: v.status.closed }] } })).json();
    t.equal((await call(env, 'POST', `/tickets/${ticket.id}/macros/${closedMacro.id}/apply`, { token: agent.token })).statusCode, 200);
    const again = await call(env, 'POST', `/tickets/${ticket.id}/macros/${macro.id}/apply`, { token: agent.token });
    t.equal(again.statusCode, 409, 'a closed ticket is final');
    t.equal(await env.deps.db('messages').where({ tenant_id: tenant.id, ticket_id: ticket.id, is_agent: true }).count({ n: '*' }).then((r) => Number(r[0]!.n)), 1, 'nothing half-written');
    t.equal((await call(env, 'POST', `/tickets/${foreignTicket.id}/macros/${macro.id}/apply`, { token: agent.token })).statusCode, 404);
    t.equal((await call(env, 'POST', `/tickets/${ticket.id}/macros/${ticket.id}/apply`, { token: agent.token })).statusCode, 404);
    t.equal((await call(env, 'POST', `/tickets/${ticket.id}/macros/${macro.id}/apply`, { token: customer.token })).statusCode, 403);
  });

  await t.test('bulk update: per-ticket results, own events, a bad id does not fail the rest', async (t) => {
    const a = await openTicket(env, admin, { requester_id: customer.id, tags: ['old'] });
    const b = await openTicket(env, admin, { requester_id: customer.id });
    const closed = await openTicket(env, admin, { requester_id: customer.id });
    await call(env, 'PATCH', `/tickets/${closed.id}`, { token: admin, body: { status_id: v.status.closed } });
    const missing = '0190a0e0-0000-7000-8000-000000000000';
    const res = await call(env, 'POST', '/tickets/bulk', { token: agent.token, body: {
      ticket_ids: [a.id, foreignTicket.id, b.id, missing, closed.id, a.id], status_id: v.status.open, priority_id: v.priority.high,
      assigned_agent_id: agent2.id, add_tags: ['Bulk'], remove_tags: ['old'],
    } });
    t.equal(res.statusCode, 200, res.body);
    const body = res.json();
    t.equal(body.updated, 2);
    t.same(body.results.map((r: { id: string; ok: boolean }) => [r.id, r.ok]), [[a.id, true], [foreignTicket.id, false], [b.id, true], [missing, false], [closed.id, false]]);
    t.match(body.results[1].error, { code: 'resource_not_found' });
    t.match(body.results[4].error, { code: 'conflict' });
    t.match((await call(env, 'GET', `/tickets/${a.id}`, { token: admin })).json(), { status_id: v.status.open, priority_id: v.priority.high, assigned_agent_id: agent2.id, tags: ['bulk'] });
    for (const id of [a.id, b.id]) {
      const types = (await events(id)).map((e) => e.type).sort();
      t.same(types, ['ticket.assignee_changed', 'ticket.created', 'ticket.priority_changed', 'ticket.status_changed'], 'each ticket its own events');
    }
    t.equal((await events(closed.id, 'ticket.priority_changed')).length, 0, 'the refused ticket changed nothing');
    t.equal((await call(env, 'POST', '/tickets/bulk', { token: agent.token, body: { ticket_ids: [a.id] } })).statusCode, 422, 'no change asked');
    t.equal((await call(env, 'POST', '/tickets/bulk', { token: agent.token, body: { ticket_ids: Array(101).fill(a.id), add_tags: ['x'] } })).statusCode, 422);
    const badStatus = await call(env, 'POST', '/tickets/bulk', { token: agent.token, body: { ticket_ids: [a.id], status_id: missing } });
    t.equal(badStatus.statusCode, 422);
    t.equal(badStatus.json().details[0].field, 'status_id');
    t.equal((await call(env, 'POST', '/tickets/bulk', { token: customer.token, body: { ticket_ids: [a.id], add_tags: ['x'] } })).statusCode, 403);
  });

  await t.test('filter values for the query builder', async (t) => {
    await call(env, 'POST', '/custom-fields', { token: admin, body: { key: 'plan', label: 'Plan', kind: 'select', options: ['free', 'pro'] } });
    const get = (query: Record<string, string>) => call(env, 'GET', '/tickets/filter-values', { token: agent.token, query });
    t.same((await get({ field: 'priority' })).json().data.map((x: { value: string }) => x.value), ['urgent', 'high', 'normal', 'low']);
    t.same((await get({ field: 'status', q: 'PEND' })).json().data, [{ value: 'pending', label: 'Pending' }]);
    t.same((await get({ field: 'custom_fields.plan' })).json(), { field: 'custom_fields.plan', data: [{ value: 'free', label: 'free' }, { value: 'pro', label: 'pro' }] });
    t.same((await get({ field: 'tag', q: 'inv' })).json().data, [{ value: 'invoices', label: 'invoices' }]);
    t.ok((await get({ field: 'assigned_agent_id' })).json().data.some((x: { value: string }) => x.value === agent.id));
    t.equal((await get({ field: 'channel', limit: '2' })).json().data.length, 2);
    const bad = await get({ field: 'custom_fields.nope' });
    t.equal(bad.statusCode, 422);
    t.equal(bad.json().details[0].field, 'field');
    t.equal((await call(env, 'GET', '/tickets/filter-values', { token: customer.token, query: { field: 'status' } })).statusCode, 403);
  });

  await t.test('subject suggestion and sentiment through the API', async (t) => {
    const ticket = await openTicket(env, admin, {
      requester_id: customer.id, subject: 'Help',
      body: 'Hi team,\n\nOur checkout is broken and customers cannot pay since the update. We are losing money, please fix this ASAP!!\n\nThanks',
    });
    const suggested = await call(env, 'POST', `/tickets/${ticket.id}/subject/suggest`, { token: agent.token, body: {} });
    t.equal(suggested.statusCode, 200, suggested.body);
    t.match(suggested.json(), { ticket_id: ticket.id, subject: /^Our checkout is broken and customers cannot pay/, message_id: String });
    const analysed = await call(env, 'POST', `/tickets/${ticket.id}/sentiment/analyze`, { token: agent.token, body: {} });
    t.equal(analysed.statusCode, 200, analysed.body);
    t.match(analysed.json(), { sentiment: 'negative', urgency_level: 'high' });
    t.ok(analysed.json().drivers.urgency.some((d: { word: string }) => d.word === 'asap'), 'names the words that drove it');
    t.equal((await call(env, 'GET', `/tickets/${ticket.id}`, { token: admin })).json().subject, 'Help', 'a suggestion changes nothing');
    const otherMessage = await call(env, 'POST', `/tickets/${ticket.id}/sentiment/analyze`, { token: agent.token, body: { message_id: ticket.id } });
    t.equal(otherMessage.statusCode, 422);
    t.equal(otherMessage.json().details[0].field, 'message_id');
    t.equal((await call(env, 'POST', `/tickets/${foreignTicket.id}/subject/suggest`, { token: agent.token, body: {} })).statusCode, 404);
    t.equal((await call(env, 'POST', `/tickets/${ticket.id}/sentiment/analyze`, { token: customer.token, body: {} })).statusCode, 403);
  });

  t.same(env.guard.violations, []);
});
