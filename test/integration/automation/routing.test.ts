import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { runJob } from '../../../src/jobs/runner.js';
import { openTicket, vocab } from '../../helpers/tickets.js';

/** Routing rules through the API: validation, order, conflicts, skills and load, triggers, the job. */


t.test('routing rules', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const admin = tenant.admin.token;
  const v = await vocab(env, admin);
  const eventsOf = (_env: unknown, ticketId: string, type: string) =>
    env.deps.db('events').where({ tenant_id: tenant.id, ticket_id: ticketId, type }).orderBy('created_at').orderBy('id');
  const post = async (path: string, body: unknown, token = admin) => {
    const res = await call(env, 'POST', path, { token, body });
    if (res.statusCode !== 201) throw new Error(`${path}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const a1 = await userFixture(env, tenant.id, 'agent');
  const a2 = await userFixture(env, tenant.id, 'agent');
  const a3 = await userFixture(env, tenant.id, 'agent');
  await call(env, 'PATCH', `/users/${a1.id}`, { token: admin, body: { max_concurrent_conversations: 1 } });
  await call(env, 'PATCH', `/users/${a2.id}`, { token: admin, body: { max_concurrent_conversations: 2 } });
  const customer = await userFixture(env, tenant.id, 'customer');
  const german = await post('/skills', { name: 'German' });
  const french = await post('/skills', { name: 'French' });
  t.ok(french.id, 'a skill nobody has');
  for (const a of [a1, a2]) t.equal((await call(env, 'POST', `/users/${a.id}/skills/${german.id}`, { token: admin })).statusCode, 201);
  const dach = await post('/teams', { name: 'DACH' });
  const tier2 = await post('/teams', { name: 'Tier 2' });
  const billing = await post('/teams', { name: 'Billing' });
  const foreignTeam = await post('/teams', { name: 'Theirs' }, other.admin.token);

  await t.test('invalid conditions and actions: 422 naming each bad item, nothing written', async (t) => {
    const res = await call(env, 'POST', '/routing-rules', {
      token: admin,
      body: {
        name: 'Broken',
        conditions: [
          { field: 'nope', operator: 'eq', value: 'x' },
          { field: 'priority', operator: 'contains', value: 'urgent' },
          { field: 'priority', operator: 'eq', value: 'sky-high' },
          { field: 'custom_fields.missing', operator: 'eq', value: 'x' },
        ],
        actions: [{ type: 'set_team', value: foreignTeam.id }, { type: 'require_skill', value: 'Klingon' }, { type: 'set_priority', value: 42 }],
      },
    });
    t.equal(res.statusCode, 422);
    t.equal(res.json().code, 'validation_failed');
    t.same(res.json().details.map((d: { field: string }) => d.field),
      ['conditions.0.field', 'conditions.1.operator', 'conditions.2.value', 'conditions.3.field', 'actions.0.value', 'actions.1.value', 'actions.2.value']);
    const unknownType = await call(env, 'POST', '/routing-rules', { token: admin, body: { name: 'X', conditions: [], actions: [{ type: 'add_tag', value: 'x' }] } });
    t.equal(unknownType.statusCode, 422);
    t.match(unknownType.json().details[0].field, /^actions\.0\.type$/);
    const tooMany = await call(env, 'POST', '/routing-rules', { token: admin, body: { name: 'X', conditions: Array(21).fill({ field: 'channel', operator: 'eq', value: 'email' }), actions: [{ type: 'set_priority', value: 'high' }] } });
    t.equal(tooMany.statusCode, 422);
    t.equal(Number((await env.deps.db('routing_rules').where({ tenant_id: tenant.id }).count({ n: '*' }))[0]!.n), 0);
    const agentTry = await call(env, 'POST', '/routing-rules', { token: a1.token, body: { name: 'Mine', conditions: [], actions: [{ type: 'set_priority', value: 'high' }] } });
    t.equal(agentTry.statusCode, 403, 'agents read rules but do not write them');
  });

  await t.test('rule order decides conflicts; each attribute goes to the first rule that decides it', async (t) => {
    const email = await post('/routing-rules', {
      name: 'Email to Tier 2', position: 10,
      conditions: [{ field: 'channel', operator: 'eq', value: 'email' }],
      actions: [{ type: 'set_team', value: tier2.id }, { type: 'set_priority', value: 'high' }],
    });
    const vip = await post('/routing-rules', {
      name: 'VIP to DACH', position: 5,
      conditions: [{ field: 'tag', operator: 'eq', value: 'vip' }],
      actions: [{ type: 'set_team', value: 'dach' }],
    });
    await post('/routing-rules', {
      name: 'Inactive', position: 0, active: false,
      conditions: [], actions: [{ type: 'set_team', value: billing.id }],
    });
    const list = (await call(env, 'GET', '/routing-rules', { token: a1.token })).json();
    t.same(list.data.map((r: { name: string }) => r.name), ['Inactive', 'VIP to DACH', 'Email to Tier 2'], 'listed in running order');
    t.match(email, { active: true, triggers: ['ticket_created', 'ticket_updated', 'time_trigger'], position: 10 });

    const both = await openTicket(env, admin, { requester_id: customer.id, channel: 'email', tags: ['vip'] });
    t.equal(both.team_id, dach.id, 'the earlier rule wins the team');
    t.equal(both.priority_id, v.priority.high, 'the later rule still decides the priority nobody decided');
    const plain = await openTicket(env, admin, { requester_id: customer.id, channel: 'email' });
    t.match(plain, { team_id: tier2.id, priority_id: v.priority.high });
    const api = await openTicket(env, admin, { requester_id: customer.id });
    t.match(api, { team_id: null, priority_id: v.priority.normal }, 'no rule matches: nothing changes (the inactive rule does not run)');
    const chosen = await openTicket(env, admin, { requester_id: customer.id, channel: 'email', team_id: billing.id });
    t.equal(chosen.team_id, billing.id, 'a team chosen at creation stays');

    const routed = await eventsOf(env, both.id, 'ticket.routed');
    t.equal(routed.length, 1);
    t.same(routed[0].data, {
      ticket_id: both.id, ticket_number: both.ticket_number, trigger_event: 'ticket_created', rule_id: vip.id, rule_name: 'VIP to DACH',
      team_id: dach.id, team_name: 'DACH',
    });
    const [teamChanged] = await eventsOf(env, both.id, 'ticket.team_changed');
    t.match(teamChanged, { actor_name: 'Routing', actor_id: null });
    t.equal((await eventsOf(env, both.id, 'ticket.priority_changed')).length, 1, 'the priority change records its event');
    t.equal((await eventsOf(env, both.id, 'ticket.created'))[0].data.team_id, dach.id, 'ticket.created carries the routed ticket');

    // Reorder: the email rule first now wins the team.
    t.equal((await call(env, 'PATCH', `/routing-rules/${email.id}`, { token: admin, body: { position: 1 } })).statusCode, 200);
    const again = await openTicket(env, admin, { requester_id: customer.id, channel: 'email', tags: ['vip'] });
    t.equal(again.team_id, tier2.id);
    for (const rule of (await call(env, 'GET', '/routing-rules', { token: admin })).json().data) {
      t.equal((await call(env, 'DELETE', `/routing-rules/${rule.id}`, { token: admin })).statusCode, 204);
    }
    t.ok(await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'routing_rule.updated' }).first(), 'rule changes are audited');
  });

  await t.test('require_skill: least-loaded available agent under the cap, none when full, the job assigns later', async (t) => {
    await post('/routing-rules', {
      name: 'German speakers', conditions: [{ field: 'tag', operator: 'eq', value: 'de' }], actions: [{ type: 'require_skill', value: german.id }],
    });
    await post('/routing-rules', {
      name: 'French speakers', conditions: [{ field: 'tag', operator: 'eq', value: 'fr' }], actions: [{ type: 'require_skill', value: 'french' }],
    });
    const first = await openTicket(env, admin, { requester_id: customer.id, tags: ['de'] });
    const second = await openTicket(env, admin, { requester_id: customer.id, tags: ['de'] });
    const third = await openTicket(env, admin, { requester_id: customer.id, tags: ['de'] });
    const fourth = await openTicket(env, admin, { requester_id: customer.id, tags: ['de'] });
    const [low, high] = [a1, a2].sort((x, y) => (x.id < y.id ? -1 : 1));
    t.equal(first.assigned_agent_id, low!.id, 'both idle: the tie goes to the lower id');
    t.equal(second.assigned_agent_id, high!.id, 'the least loaded agent with room');
    t.equal(third.assigned_agent_id, a2.id, 'a1 is at its cap of 1; a2 has room');
    t.equal(fourth.assigned_agent_id, null, 'everyone with the skill is full: the ticket waits');
    t.equal((await eventsOf(env, fourth.id, 'ticket.routed')).length, 0, 'no assignment, no routed event');
    const [routed] = await eventsOf(env, third.id, 'ticket.routed');
    t.match(routed.data, { trigger_event: 'ticket_created', rule_name: 'German speakers', agent_id: a2.id, agent_name: String });
    t.notOk('team_id' in routed.data, 'an agent assignment names the agent');
    t.ok((await eventsOf(env, third.id, 'ticket.assignee_changed')).length, 'the assignment records assignee_changed');

    const french1 = await openTicket(env, admin, { requester_id: customer.id, tags: ['fr'] });
    t.equal(french1.assigned_agent_id, null, 'a skill nobody has: unassigned');
    void a3;

    // The job before anyone has room: nothing changes. Then a1 resolves its ticket and has room.
    const idle = await runJob(env.deps, 'routing-time-trigger', { now: new Date() });
    t.match(idle, { status: 'succeeded' });
    t.equal((await call(env, 'GET', `/tickets/${fourth.id}`, { token: admin })).json().assigned_agent_id, null);
    const a1Ticket = [first, second, third].find((x) => x.assigned_agent_id === a1.id)!;
    t.equal((await call(env, 'PATCH', `/tickets/${a1Ticket.id}`, { token: a1.token, body: { status_id: v.status.resolved } })).statusCode, 200);
    const run = await runJob(env.deps, 'routing-time-trigger', { now: new Date() });
    t.match(run, { status: 'succeeded' });
    t.equal((await call(env, 'GET', `/tickets/${fourth.id}`, { token: admin })).json().assigned_agent_id, a1.id, 'the waiting ticket found room');
    const [late] = await eventsOf(env, fourth.id, 'ticket.routed');
    t.match(late.data, { trigger_event: 'time_trigger', agent_id: a1.id });
  });

  await t.test('on update: rules react to the change, but leave alone what the same update set by hand', async (t) => {
    const rule = await post('/routing-rules', {
      name: 'Refunds to billing', triggers: ['ticket_updated'],
      conditions: [{ field: 'subject', operator: 'contains', value: 'REFUND' }], actions: [{ type: 'set_team', value: billing.id }],
    });
    const ticket = await openTicket(env, admin, { requester_id: customer.id, subject: 'Refund please' });
    t.equal(ticket.team_id, null, 'the rule runs on updates only');
    const patched = await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: a3.token, body: { summary: 'wants money back' } });
    t.equal(patched.json().team_id, billing.id);
    const [routed] = await eventsOf(env, ticket.id, 'ticket.routed');
    t.match(routed.data, { trigger_event: 'ticket_updated', rule_id: rule.id, team_id: billing.id, team_name: 'Billing' });

    const byHand = await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: a3.token, body: { team_id: dach.id } });
    t.equal(byHand.json().team_id, dach.id, 'the hand-set team stays');
    const tagged = await call(env, 'PUT', `/tickets/${ticket.id}/tags`, { token: a3.token, body: { tags: ['money'] } });
    t.same(tagged.json(), { tags: ['money'] });
    t.equal((await call(env, 'GET', `/tickets/${ticket.id}`, { token: admin })).json().team_id, billing.id, 'a later update routes again');
  });

  await t.test("a customer's own ticket is routed too", async (t) => {
    await post('/routing-rules', { name: 'Portal', conditions: [{ field: 'subject', operator: 'contains', value: 'portal' }], actions: [{ type: 'set_team', value: 'tier 2' }] });
    const res = await call(env, 'POST', '/tickets', { token: customer.token, body: { subject: 'Portal login', body: 'Cannot sign in' } });
    t.equal(res.statusCode, 201, res.body);
    t.equal(res.json().team_id, tier2.id);
  });

  await t.test('concurrent tickets cannot overfill an agent', async (t) => {
    const rush = await post('/skills', { name: 'Rush' });
    const solo = await userFixture(env, tenant.id, 'agent');
    await call(env, 'PATCH', `/users/${solo.id}`, { token: admin, body: { max_concurrent_conversations: 1 } });
    await call(env, 'POST', `/users/${solo.id}/skills/${rush.id}`, { token: admin });
    await post('/routing-rules', { name: 'Rush', conditions: [{ field: 'tag', operator: 'eq', value: 'rush' }], actions: [{ type: 'require_skill', value: rush.id }] });
    const created = await Promise.all([1, 2, 3, 4].map(() => openTicket(env, admin, { requester_id: customer.id, tags: ['rush'] })));
    t.equal(created.filter((x) => x.assigned_agent_id === solo.id).length, 1, 'exactly one ticket for the agent with room for one');
  });

  t.same(env.guard.violations, []);
});
