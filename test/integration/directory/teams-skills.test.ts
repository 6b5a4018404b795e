import t from 'tap';
import { apiKeyFixture, call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';

const count = async (env: TestEnv, table: string, tenantId: string) =>
  Number((await env.deps.db(table).where({ tenant_id: tenantId }).count({ n: '*' }))[0]!.n);
const UNKNOWN = '0190a1b2-0000-7000-8000-00000000abcd';

t.test('teams and members', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent', 'ada@example.com');
  const agent2 = await userFixture(env, tenant.id, 'agent', 'bob@example.com');
  const customer = await userFixture(env, tenant.id, 'customer');
  const otherAgent = await userFixture(env, other.id, 'agent');
  const otherTeam = (await call(env, 'POST', '/teams', { token: other.admin.token, body: { name: 'Billing' } })).json();

  const created = await call(env, 'POST', '/teams', { token: admin, body: { name: ' Billing ', description: 'Invoices' } });
  t.equal(created.statusCode, 201);
  const team = created.json();
  t.match(team, { name: 'Billing', description: 'Invoices' });
  t.same(Object.keys(team).sort(), ['created_at', 'description', 'id', 'name', 'updated_at']);
  t.equal((await call(env, 'POST', '/teams', { token: admin, body: { name: 'BILLING' } })).json().code, 'already_exists');
  t.equal((await call(env, 'POST', '/teams', { token: agent.token, body: { name: 'Sales' } })).statusCode, 403, 'agents only read teams');

  await t.test('members: add with is_lead, list leads first, change, remove', async (t) => {
    const add = await call(env, 'POST', `/teams/${team.id}/members`, { token: admin, body: { user_id: agent.id } });
    t.equal(add.statusCode, 201);
    t.same(add.json(), { user_id: agent.id, name: add.json().name, email: 'ada@example.com', is_lead: false });
    const lead = await call(env, 'POST', `/teams/${team.id}/members`, { token: admin, body: { user_id: agent2.id, is_lead: true } });
    t.equal(lead.json().is_lead, true);
    const again = await call(env, 'POST', `/teams/${team.id}/members`, { token: admin, body: { user_id: agent.id } });
    t.equal(again.statusCode, 409);
    t.equal(again.json().code, 'already_exists');
    const list = await call(env, 'GET', `/teams/${team.id}/members`, { token: agent.token });
    t.same(list.json().data.map((m: { email: string; is_lead: boolean }) => [m.email, m.is_lead]), [['bob@example.com', true], ['ada@example.com', false]]);
    const patch = await call(env, 'PATCH', `/teams/${team.id}/members/${agent.id}`, { token: admin, body: { is_lead: true } });
    t.equal(patch.statusCode, 200);
    t.equal(patch.json().is_lead, true);
    const del = await call(env, 'DELETE', `/teams/${team.id}/members/${agent2.id}`, { token: admin });
    t.equal(del.statusCode, 204);
    t.equal((await call(env, 'DELETE', `/teams/${team.id}/members/${agent2.id}`, { token: admin })).statusCode, 404, 'not a member any more');
    const audit = await env.deps.db('audit_log').where({ tenant_id: tenant.id, resource_id: team.id }).orderBy('created_at').pluck('action');
    t.same(audit, ['team.created', 'team.member_added', 'team.member_added', 'team.member_updated', 'team.member_removed']);
  });

  await t.test('bad members: customers, unknown users, other tenants; nothing written', async (t) => {
    const before = await count(env, 'team_members', tenant.id);
    const cust = await call(env, 'POST', `/teams/${team.id}/members`, { token: admin, body: { user_id: customer.id } });
    t.equal(cust.statusCode, 422);
    t.same(cust.json().details, [{ field: 'user_id', message: 'must be an agent or admin; customers cannot join teams' }]);
    for (const id of [UNKNOWN, otherAgent.id]) {
      const res = await call(env, 'POST', `/teams/${team.id}/members`, { token: admin, body: { user_id: id } });
      t.equal(res.statusCode, 422);
      t.same(res.json().details, [{ field: 'user_id', message: 'is not a user of this tenant' }]);
    }
    const bad = await call(env, 'POST', `/teams/${team.id}/members`, { token: admin, body: { user_id: 'nope', is_lead: 'yes' } });
    t.same(bad.json().details.map((d: { field: string }) => d.field).sort(), ['is_lead', 'user_id']);
    const foreignTeam = await call(env, 'POST', `/teams/${otherTeam.id}/members`, { token: admin, body: { user_id: agent.id } });
    t.equal(foreignTeam.statusCode, 404);
    t.equal((await call(env, 'PATCH', `/teams/${team.id}/members/${otherAgent.id}`, { token: admin, body: { is_lead: true } })).statusCode, 404);
    t.equal(await count(env, 'team_members', tenant.id), before);
  });

  await t.test('/teams/mine lists the caller’s teams, also through an API key', async (t) => {
    await call(env, 'POST', '/teams', { token: admin, body: { name: 'Sales' } });
    const mine = await call(env, 'GET', '/teams/mine', { token: agent.token });
    t.same(mine.json().data.map((x: { name: string }) => x.name), ['Billing']);
    t.same((await call(env, 'GET', '/teams/mine', { token: agent2.token })).json().data, []);
    const key = await apiKeyFixture(env, tenant.id, agent.id, ['teams:read']);
    t.same((await call(env, 'GET', '/teams/mine', { token: key.key })).json().data.map((x: { name: string }) => x.name), ['Billing']);
    t.equal((await call(env, 'GET', '/teams/mine', { token: customer.token })).statusCode, 403);
  });

  await t.test('PATCH, GET, DELETE a team; other tenants 404', async (t) => {
    const patched = await call(env, 'PATCH', `/teams/${team.id}`, { token: admin, body: { description: null } });
    t.equal(patched.json().description, null);
    t.equal((await call(env, 'PATCH', `/teams/${team.id}`, { token: admin, body: { name: 'sales' } })).statusCode, 409);
    for (const [method, path] of [['GET', `/teams/${otherTeam.id}`], ['PATCH', `/teams/${otherTeam.id}`], ['DELETE', `/teams/${otherTeam.id}`], ['GET', `/teams/${otherTeam.id}/members`]] as const) {
      t.equal((await call(env, method, path, { token: admin, body: method === 'PATCH' ? { name: 'x' } : undefined })).statusCode, 404, `${method} ${path}`);
    }
    t.equal((await call(env, 'DELETE', `/teams/${team.id}`, { token: admin })).statusCode, 204);
    t.equal(await env.deps.db('team_members').where({ tenant_id: tenant.id, team_id: team.id }).first(), undefined, 'members go with the team');
    t.equal((await call(env, 'GET', `/teams/${otherTeam.id}`, { token: other.admin.token })).statusCode, 200, 'the other tenant’s team is untouched');
  });
  t.same(env.guard.violations, []);
});

t.test('skills and user skills', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const otherSkill = (await call(env, 'POST', '/skills', { token: other.admin.token, body: { name: 'German' } })).json();

  const german = (await call(env, 'POST', '/skills', { token: admin, body: { name: 'German', description: 'Deutsch' } })).json();
  t.match(german, { name: 'German', description: 'Deutsch' });
  const french = (await call(env, 'POST', '/skills', { token: admin, body: { name: 'French' } })).json();
  t.equal((await call(env, 'POST', '/skills', { token: admin, body: { name: 'german' } })).statusCode, 409);
  t.same((await call(env, 'GET', '/skills', { token: agent.token })).json().data.map((s: { name: string }) => s.name), ['French', 'German']);
  t.equal((await call(env, 'POST', '/skills', { token: agent.token, body: { name: 'Nope' } })).statusCode, 403);

  const assign = await call(env, 'POST', `/users/${agent.id}/skills/${german.id}`, { token: admin });
  t.equal(assign.statusCode, 201);
  t.equal(assign.json().id, german.id);
  t.equal((await call(env, 'POST', `/users/${agent.id}/skills/${german.id}`, { token: admin })).statusCode, 201, 'assigning again changes nothing');
  t.equal(await count(env, 'user_skills', tenant.id), 1);
  const cust = await call(env, 'POST', `/users/${customer.id}/skills/${french.id}`, { token: admin });
  t.equal(cust.statusCode, 409);
  t.equal(cust.json().code, 'conflict');
  t.equal((await call(env, 'POST', `/users/${agent.id}/skills/${otherSkill.id}`, { token: admin })).statusCode, 404, 'another tenant’s skill');
  t.same((await call(env, 'GET', `/users/${agent.id}/skills`, { token: agent.token })).json().data.map((s: { name: string }) => s.name), ['German']);

  const renamed = await call(env, 'PATCH', `/skills/${german.id}`, { token: admin, body: { name: 'Deutsch' } });
  t.equal(renamed.json().name, 'Deutsch');
  t.equal((await call(env, 'PATCH', `/skills/${german.id}`, { token: admin, body: { name: 'French' } })).statusCode, 409);
  t.equal((await call(env, 'PATCH', `/skills/${otherSkill.id}`, { token: admin, body: { name: 'x' } })).statusCode, 404);
  t.equal((await call(env, 'DELETE', `/users/${agent.id}/skills/${french.id}`, { token: admin })).statusCode, 404, 'not held');
  t.equal((await call(env, 'DELETE', `/users/${agent.id}/skills/${german.id}`, { token: admin })).statusCode, 204);
  await call(env, 'POST', `/users/${agent.id}/skills/${french.id}`, { token: admin });
  t.equal((await call(env, 'DELETE', `/skills/${french.id}`, { token: admin })).statusCode, 204);
  t.equal(await count(env, 'user_skills', tenant.id), 0, 'a deleted skill leaves its holders');
  t.equal((await call(env, 'DELETE', `/skills/${otherSkill.id}`, { token: admin })).statusCode, 404);
  t.equal((await call(env, 'GET', `/skills/${otherSkill.id}`, { token: other.admin.token })).statusCode, 200);
  t.same(env.guard.violations, []);
});

t.test('consent records', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const otherCustomer = await userFixture(env, other.id, 'customer');

  const first = await call(env, 'PUT', `/customers/${customer.id}/consent`, { token: agent.token, body: { consent_status: 'opted_in', notes: ' On the phone ' } });
  t.equal(first.statusCode, 200);
  t.match(first.json(), { customer_id: customer.id, channel: 'all', consent_status: 'opted_in', notes: 'On the phone', recorded_by: agent.id });
  const second = await call(env, 'PUT', `/customers/${customer.id}/consent`, { token: agent.token, body: { consent_status: 'opted_out', channel: 'sms' } });
  t.equal(second.json().channel, 'sms');
  const list = await call(env, 'GET', `/customers/${customer.id}/consent`, { token: agent.token });
  t.same(list.json().data.map((c: { consent_status: string }) => c.consent_status), ['opted_out', 'opted_in'], 'newest first, history kept');
  t.equal(list.json().meta.total, 2);

  const bad = await call(env, 'PUT', `/customers/${customer.id}/consent`, { token: agent.token, body: { consent_status: 'maybe', channel: 'pigeon' } });
  t.equal(bad.statusCode, 422);
  t.same(bad.json().details.map((d: { field: string }) => d.field).sort(), ['channel', 'consent_status']);
  t.equal((await call(env, 'PUT', `/customers/${agent.id}/consent`, { token: agent.token, body: { consent_status: 'opted_in' } })).statusCode, 404, 'staff are not customers');
  t.equal((await call(env, 'PUT', `/customers/${otherCustomer.id}/consent`, { token: agent.token, body: { consent_status: 'opted_in' } })).statusCode, 404);
  t.equal((await call(env, 'GET', `/customers/${otherCustomer.id}/consent`, { token: agent.token })).statusCode, 404);
  t.equal((await call(env, 'GET', `/customers/${customer.id}/consent`, { token: customer.token })).statusCode, 403, 'staff only');
  t.equal(await count(env, 'consent_records', tenant.id), 2, 'refusals wrote nothing');
  t.same(env.guard.violations, []);
});
