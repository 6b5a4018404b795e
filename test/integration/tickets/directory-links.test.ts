import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { count, openTicket, vocab } from '../../helpers/tickets.js';
import { CLI_ACTOR } from '../../../src/core/context.js';
import { readContext } from '../../../src/db/transaction.js';
import { Ticket } from '../../../src/tickets/models.js';

/**
 * Where tickets meet the directory: teams checked and named, the organization taken from the
 * requester, the foreign keys' delete rule, organizations that share tickets with their members,
 * and the lists of one requester or organization.
 */

t.test('tickets and the directory', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent');
  const v = await vocab(env, admin);
  const post = async (path: string, body: unknown, token = admin) => {
    const res = await call(env, 'POST', path, { token, body });
    if (res.statusCode !== 201) throw new Error(`${path}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const team = await post('/teams', { name: 'Billing desk' });
  const team2 = await post('/teams', { name: 'Hardware desk' });
  const foreignTeam = await post('/teams', { name: 'Foreign desk' }, other.admin.token);
  const acme = await post('/organizations', { name: 'Acme', domains: ['acme.test'] });
  const foreignOrg = await post('/organizations', { name: 'Foreign Org', domains: ['foreign.test'] }, other.admin.token);
  // Domain members of Acme, linked automatically; a customer of no organization.
  const ann = await userFixture(env, tenant.id, 'customer', 'ann@acme.test');
  const bob = await userFixture(env, tenant.id, 'customer', 'bob@acme.test');
  const loner = await userFixture(env, tenant.id, 'customer', 'loner@elsewhere.test');
  const foreignCustomer = await userFixture(env, other.id, 'customer', 'zed@foreign.test');
  const createdEvent = (ticketId: string) => env.deps.db('events').where({ tenant_id: tenant.id, ticket_id: ticketId, type: 'ticket.created' }).first();

  await t.test('create: the organization is the requester\'s, the team is checked, the event names both', async (t) => {
    const ticket = await openTicket(env, admin, { requester_id: ann.id, team_id: team.id });
    t.match(ticket, { organization_id: acme.id, team_id: team.id });
    t.match((await createdEvent(ticket.id)).data, { organization_name: 'Acme', team_id: team.id, team_name: 'Billing desk' });

    const none = await openTicket(env, admin, { requester_id: loner.id });
    t.match(none, { organization_id: null, team_id: null });
    t.match((await createdEvent(none.id)).data, { organization_name: null, team_name: null });

    // A new customer at an organization's domain joins it, and so does their first ticket.
    const fresh = await openTicket(env, admin, { requester: { email: 'Carol@ACME.test', name: 'Carol' } });
    t.equal(fresh.organization_id, acme.id);
    t.match((await createdEvent(fresh.id)).data, { organization_name: 'Acme', requester_email: 'carol@acme.test' });
  });

  await t.test('the Ticket model loads requester, assignee, team and organization on the composite key', async (t) => {
    const ticket = await openTicket(env, admin, { requester_id: ann.id, team_id: team.id, assigned_agent_id: agent.id });
    // On a read context (the pool): an eager load runs its relation queries side by side.
    const ctx = readContext(env.deps, { tenantId: tenant.id, actor: CLI_ACTOR, now: new Date() });
    const loaded = await Ticket.scoped(ctx).where('tickets.id', ticket.id).withGraphFetched('[requester, assignee, team, organization]').first();
    t.match(loaded, { requester: { id: ann.id, email: 'ann@acme.test' }, assignee: { id: agent.id }, team: { name: 'Billing desk' }, organization: { name: 'Acme' } });
    t.same(env.guard.violations, [], 'every relation query is tenant-scoped');
  });

  await t.test('create: an unknown or other tenant\'s team is 422 naming team_id, with the other problems, nothing written', async (t) => {
    const before = { tickets: await count(env, 'tickets', tenant.id), users: await count(env, 'users', tenant.id), events: await count(env, 'events', tenant.id) };
    for (const teamId of [foreignTeam.id, '0190a1b2-0000-7000-8000-0000000000aa']) {
      const res = await call(env, 'POST', '/tickets', {
        token: admin, body: { subject: 'S', body: 'B', requester: { email: 'nobody-yet@example.test' }, team_id: teamId, priority_id: '0190a1b2-0000-7000-8000-0000000000ab' },
      });
      t.equal(res.statusCode, 422, res.body);
      t.match(res.json(), { code: 'validation_failed' });
      t.same(res.json().details.map((d: { field: string }) => d.field).sort(), ['priority_id', 'team_id']);
      t.match(res.json().details.find((d: { field: string }) => d.field === 'team_id'), { message: 'does not exist' });
    }
    t.same({ tickets: await count(env, 'tickets', tenant.id), users: await count(env, 'users', tenant.id), events: await count(env, 'events', tenant.id) }, before);
  });

  await t.test('update: team changes carry both names; an unknown or foreign team is 422 and changes nothing', async (t) => {
    const ticket = await openTicket(env, admin, { requester_id: loner.id, team_id: team.id });
    const moved = await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: agent.token, body: { team_id: team2.id } });
    t.equal(moved.statusCode, 200, moved.body);
    const event = await env.deps.db('events').where({ tenant_id: tenant.id, ticket_id: ticket.id, type: 'ticket.team_changed' }).first();
    t.match(event, { from_value: 'Billing desk', to_value: 'Hardware desk', data: { from: 'Billing desk', to: 'Hardware desk', from_id: team.id, to_id: team2.id } });

    for (const teamId of [foreignTeam.id, '0190a1b2-0000-7000-8000-0000000000ac']) {
      const res = await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: agent.token, body: { team_id: teamId, subject: 'Changed', status_id: v.status.open } });
      t.equal(res.statusCode, 422, res.body);
      t.same(res.json().details, [{ field: 'team_id', message: 'does not exist' }]);
    }
    const after = (await call(env, 'GET', `/tickets/${ticket.id}`, { token: admin })).json();
    t.match(after, { team_id: team2.id, subject: ticket.subject, status_id: ticket.status_id });
    t.equal((await env.deps.db('events').where({ tenant_id: tenant.id, ticket_id: ticket.id }).whereNot('type', 'ticket.created')).length, 1);
  });

  await t.test('requester by an alternate address finds the customer', async (t) => {
    const res = await call(env, 'PATCH', `/users/${loner.id}`, { token: admin, body: { alternate_emails: ['loner.work@example.test'] } });
    t.equal(res.statusCode, 200, res.body);
    const users = await count(env, 'users', tenant.id);
    const ticket = await openTicket(env, admin, { requester: { email: 'Loner.Work@example.test' } });
    t.equal(ticket.requester_id, loner.id);
    t.equal(await count(env, 'users', tenant.id), users, 'no customer created');
    // The customer themselves may name any of their addresses.
    const own = await openTicket(env, loner.token, { requester: { email: 'loner.work@example.test' } });
    t.equal(own.requester_id, loner.id);
  });

  await t.test('deleting a team or an organization keeps its tickets, unlinked', async (t) => {
    const doomedTeam = await post('/teams', { name: 'Short-lived' });
    const doomedOrg = await post('/organizations', { name: 'Gone Inc', domains: ['gone.test'] });
    const dora = await userFixture(env, tenant.id, 'customer', 'dora@gone.test');
    const ticket = await openTicket(env, admin, { requester_id: dora.id, team_id: doomedTeam.id });
    t.match(ticket, { team_id: doomedTeam.id, organization_id: doomedOrg.id });
    t.equal((await call(env, 'DELETE', `/teams/${doomedTeam.id}`, { token: admin })).statusCode, 204);
    t.equal((await call(env, 'DELETE', `/organizations/${doomedOrg.id}`, { token: admin })).statusCode, 204);
    const after = await call(env, 'GET', `/tickets/${ticket.id}`, { token: admin });
    t.equal(after.statusCode, 200);
    t.match(after.json(), { team_id: null, organization_id: null, requester_id: dora.id });
    // The database itself refuses a ticket naming a team or organization that is not there.
    const raw = env.deps.db('tickets').where({ tenant_id: tenant.id, id: ticket.id });
    await t.rejects(raw.clone().update({ team_id: foreignTeam.id }), /tickets_team/);
    await t.rejects(raw.clone().update({ organization_id: foreignOrg.id }), /tickets_organization/);
  });

  await t.test('customers see their organization\'s tickets only while it shares them', async (t) => {
    const annTicket = await openTicket(env, ann.token, { subject: 'Ann asks' });
    const bobTicket = await openTicket(env, bob.token, { subject: 'Bob asks' });
    const lonerTicket = await openTicket(env, loner.token, { subject: 'Loner asks' });
    const listIds = async (token: string, path = '/tickets') => {
      const res = await call(env, 'GET', path, { token, query: { page_size: '100' } });
      return { status: res.statusCode, ids: res.statusCode === 200 ? res.json().data.map((x: { id: string }) => x.id) as string[] : [] };
    };

    // Sharing off: own tickets only.
    t.notOk((await listIds(ann.token)).ids.includes(bobTicket.id));
    t.equal((await call(env, 'GET', `/tickets/${bobTicket.id}`, { token: ann.token })).statusCode, 404);
    t.equal((await listIds(ann.token, `/organizations/${acme.id}/tickets`)).status, 404);

    t.equal((await call(env, 'PATCH', `/organizations/${acme.id}`, { token: admin, body: { shares_tickets: true } })).statusCode, 200);
    const shared = await listIds(ann.token);
    t.ok(shared.ids.includes(annTicket.id) && shared.ids.includes(bobTicket.id), 'Ann sees Bob\'s ticket');
    t.notOk(shared.ids.includes(lonerTicket.id));
    t.equal((await call(env, 'GET', `/tickets/${bobTicket.id}`, { token: ann.token })).statusCode, 200);
    const orgList = await listIds(ann.token, `/organizations/${acme.id}/tickets`);
    t.equal(orgList.status, 200);
    t.ok(orgList.ids.includes(bobTicket.id) && !orgList.ids.includes(lonerTicket.id));
    // A customer outside the organization sees none of it.
    t.notOk((await listIds(loner.token)).ids.includes(bobTicket.id));
    t.equal((await listIds(loner.token, `/organizations/${acme.id}/tickets`)).status, 404);
    t.equal((await call(env, 'GET', `/tickets/${bobTicket.id}`, { token: loner.token })).statusCode, 404);
    // A customer still may not write to a colleague's ticket.
    t.equal((await call(env, 'PATCH', `/tickets/${bobTicket.id}`, { token: ann.token, body: { subject: 'x' } })).statusCode, 403);

    // Sharing off again: gone at once.
    await call(env, 'PATCH', `/organizations/${acme.id}`, { token: admin, body: { shares_tickets: false } });
    t.notOk((await listIds(ann.token)).ids.includes(bobTicket.id));
    t.equal((await call(env, 'GET', `/tickets/${bobTicket.id}`, { token: ann.token })).statusCode, 404);
  });

  await t.test('GET /users/{id}/tickets: the list of one requester, with the list\'s filters and pagination', async (t) => {
    const requester = await userFixture(env, tenant.id, 'customer', 'many@example.test');
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await openTicket(env, admin, { requester_id: requester.id, subject: `Many ${i}` }));
    await openTicket(env, admin, { requester_id: loner.id, subject: 'Not theirs' });
    await call(env, 'PATCH', `/tickets/${made[0].id}`, { token: admin, body: { status_id: v.status.open } });

    const all = await call(env, 'GET', `/users/${requester.id}/tickets`, { token: agent.token });
    t.equal(all.statusCode, 200, all.body);
    t.same(all.json().data.map((x: { id: string }) => x.id), made.map((x) => x.id).reverse());
    t.match(all.json().meta, { page: 1, total: 5 });
    // Filters, sorts and cursors are the list's own.
    const open = await call(env, 'GET', `/users/${requester.id}/tickets`, { token: agent.token, query: { status_id: v.status.open } });
    t.same(open.json().data.map((x: { id: string }) => x.id), [made[0].id]);
    const seen: string[] = [];
    let cursor = '';
    for (let i = 0; i < 5; i++) {
      const page = (await call(env, 'GET', `/users/${requester.id}/tickets`, { token: agent.token, query: { cursor, page_size: '2', sort_by: 'ticket_number', sort_dir: 'asc' } })).json();
      seen.push(...page.data.map((x: { id: string }) => x.id));
      if (!page.meta.next_cursor) break;
      cursor = page.meta.next_cursor;
    }
    t.same(seen, made.map((x) => x.id));
    // requester_id is the path's: a query parameter of that name does not widen or move the list.
    const moved = await call(env, 'GET', `/users/${requester.id}/tickets`, { token: agent.token, query: { requester_id: loner.id } });
    t.ok(moved.statusCode !== 200 || moved.json().data.every((x: { requester_id: string }) => x.requester_id === requester.id));

    // A customer: their own list only; anyone else's id is not found.
    const mine = await call(env, 'GET', `/users/${requester.id}/tickets`, { token: requester.token });
    t.equal(mine.json().data.length, 5);
    t.equal((await call(env, 'GET', `/users/${loner.id}/tickets`, { token: requester.token })).statusCode, 404);
    // Unknown, malformed and other tenants' ids are 404.
    for (const id of ['0190a1b2-0000-7000-8000-0000000000ad', 'not-a-uuid', foreignCustomer.id]) {
      const res = await call(env, 'GET', `/users/${id}/tickets`, { token: admin });
      t.equal(res.statusCode, 404, id);
      t.equal(res.json().code, 'resource_not_found');
    }
  });

  await t.test('GET /organizations/{id}/tickets: staff see any organization of the tenant; others are 404', async (t) => {
    const res = await call(env, 'GET', `/organizations/${acme.id}/tickets`, { token: agent.token, query: { page_size: '100' } });
    t.equal(res.statusCode, 200, res.body);
    const rows = res.json().data as Array<{ organization_id: string; requester_id: string }>;
    t.ok(rows.length >= 4);
    t.ok(rows.every((r) => r.organization_id === acme.id));
    // The list's filters and conditions apply within the organization.
    const byAnn = await call(env, 'GET', `/organizations/${acme.id}/tickets`, { token: agent.token, query: { requester_id: ann.id } });
    t.equal(byAnn.statusCode, 200, byAnn.body);
    t.ok(byAnn.json().data.length >= 2 && byAnn.json().data.every((r: { requester_id: string }) => r.requester_id === ann.id));
    const billing = await call(env, 'GET', `/organizations/${acme.id}/tickets`, { token: agent.token, query: { conditions: JSON.stringify([{ field: 'team_id', operator: 'eq', value: team.id }]) } });
    t.equal(billing.statusCode, 200, billing.body);
    const billingRows = billing.json().data.map((r: { team_id: string; organization_id: string }) => [r.team_id, r.organization_id]);
    t.same(billingRows, [[team.id, acme.id], [team.id, acme.id]], 'the two Billing desk tickets of Acme');
    for (const id of ['0190a1b2-0000-7000-8000-0000000000ae', 'not-a-uuid', foreignOrg.id]) {
      const missing = await call(env, 'GET', `/organizations/${id}/tickets`, { token: admin });
      t.equal(missing.statusCode, 404, id);
      t.equal(missing.json().code, 'resource_not_found');
    }
    // The other tenant's customer, in their own organization, does not reach Acme's tickets.
    t.equal((await call(env, 'GET', `/organizations/${acme.id}/tickets`, { token: foreignCustomer.token })).statusCode, 404);
  });
});
