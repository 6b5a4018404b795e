import t from 'tap';
import { apiKeyFixture, call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { CLI_ACTOR, type Actor } from '../../../src/core/context.js';
import { AppError } from '../../../src/core/errors.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { createUser, updateUser } from '../../../src/directory/users.js';

const USER_FIELDS = [
  'id', 'email', 'name', 'role', 'custom_role_id', 'active', 'phone', 'notes', 'department', 'alternate_emails', 'custom_fields', 'is_vip',
  'max_concurrent_conversations', 'organization_id', 'avatar_url', 'timezone', 'locale', 'two_factor_enabled',
  'invited_at', 'last_login_at', 'created_at', 'updated_at',
].sort();

const auditRows = (env: TestEnv, tenantId: string, action: string) =>
  env.deps.db('audit_log').where({ tenant_id: tenantId, action }).orderBy('created_at');
const userCount = async (env: TestEnv, tenantId: string) => Number((await env.deps.db('users').where({ tenant_id: tenantId }).count({ n: '*' }))[0]!.n);

t.test('users', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const otherCustomer = await userFixture(env, other.id, 'customer');
  const admin = tenant.admin.token;

  await t.test('POST /users creates a customer by default, with exactly the public fields', async (t) => {
    const res = await call(env, 'POST', '/users', { token: admin, body: { email: 'Jane.Doe@Example.COM', name: ' Jane Doe ' } });
    t.equal(res.statusCode, 201);
    const user = res.json();
    t.same(Object.keys(user).sort(), USER_FIELDS, 'no password or 2FA secrets');
    t.match(user, {
      email: 'jane.doe@example.com', name: 'Jane Doe', role: 'customer', active: true, phone: null, alternate_emails: [],
      custom_fields: {}, is_vip: false, two_factor_enabled: false, invited_at: null, last_login_at: null,
    });
    t.match(user.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const row = await env.deps.db('users').where({ tenant_id: tenant.id, id: user.id }).first();
    t.equal(row.password_hash, null);
    const [audit] = await auditRows(env, tenant.id, 'user.created').where('resource_id', user.id);
    t.match(audit, { actor_type: 'user', actor_id: tenant.admin.id, resource_type: 'user', changes: { email: 'jane.doe@example.com', role: 'customer' } });
  });

  await t.test('POST /users with every field', async (t) => {
    const org = await call(env, 'POST', '/organizations', { token: admin, body: { name: 'Full Profile Org' } });
    const body = {
      email: 'full@example.com', name: 'Full Profile', role: 'agent', password: 'a very long password',
      phone: '+49 30 123456', notes: 'Night shift', department: 'Support', alternate_emails: ['Alt@Example.com'],
      custom_fields: { tier: 'gold', seats: 3 }, is_vip: true, max_concurrent_conversations: 4,
      organization_id: org.json().id as string, avatar_url: 'https://cdn.example.com/a.png',
      timezone: 'Europe/Berlin', locale: 'de-DE',
    };
    const res = await call(env, 'POST', '/users', { token: admin, body });
    t.equal(res.statusCode, 201);
    const { password: _password, ...expected } = body;
    t.match(res.json(), { ...expected, alternate_emails: ['alt@example.com'] });
    const row = await env.deps.db('users').where({ tenant_id: tenant.id, email: 'full@example.com' }).first();
    t.match(row.password_hash, /^\$argon2id\$/);
  });

  await t.test('POST /users refuses bad input with one detail per problem and writes nothing', async (t) => {
    const before = await userCount(env, tenant.id);
    const res = await call(env, 'POST', '/users', {
      token: admin,
      body: {
        email: 'not-an-email', role: 'owner', password: 'short', alternate_emails: ['nope'], max_concurrent_conversations: -1,
        organization_id: 'abc', avatar_url: 'ftp://example.com/a.png', is_vip: 'very', shoe_size: 44,
      },
    });
    t.equal(res.statusCode, 422);
    t.equal(res.json().code, 'validation_failed');
    const fields = (res.json().details as Array<{ field: string }>).map((d) => d.field).sort();
    t.same(fields, ['alternate_emails.0', 'avatar_url', 'email', 'is_vip', 'max_concurrent_conversations', 'name', 'organization_id', 'password', 'role', 'shoe_size']);
    // A blank name is a form rule (the schema's); the zone database only the service knows.
    const blank = await call(env, 'POST', '/users', { token: admin, body: { email: 'tz@example.com', name: '  ', timezone: 'Mars/Olympus' } });
    t.equal(blank.statusCode, 422);
    t.same(blank.json().details, [{ field: 'name', message: 'must not be blank' }]);
    const zone = await call(env, 'POST', '/users', { token: admin, body: { email: 'tz@example.com', name: 'Tee Zed', timezone: 'Mars/Olympus' } });
    t.equal(zone.statusCode, 422);
    t.same(zone.json().details, [{ field: 'timezone', message: 'must be an IANA time zone name such as Europe/Berlin' }]);
    t.equal(await userCount(env, tenant.id), before, 'nothing written');
  });

  await t.test('duplicate email, case-insensitively, is 409 already_exists', async (t) => {
    const res = await call(env, 'POST', '/users', { token: admin, body: { email: 'JANE.DOE@example.com', name: 'Again' } });
    t.equal(res.statusCode, 409);
    t.equal(res.json().code, 'already_exists');
    t.same(res.json().details, [{ field: 'email', message: 'is already taken' }]);
  });

  await t.test('who may create users', async (t) => {
    const anonymous = await call(env, 'POST', '/users', { body: { email: 'x@example.com', name: 'X' } });
    t.equal(anonymous.statusCode, 401);
    const byAgent = await call(env, 'POST', '/users', { token: agent.token, body: { email: 'x@example.com', name: 'X' } });
    t.equal(byAgent.statusCode, 403);
    t.same(byAgent.json().details, { required_scope: 'users:write' });
    const byCustomer = await call(env, 'GET', '/users', { token: customer.token });
    t.equal(byCustomer.statusCode, 403);
    t.equal(byCustomer.json().code, 'insufficient_scope');
    // An admin's key with users:write acts as the admin: it may create another admin.
    const key = (await apiKeyFixture(env, tenant.id, tenant.admin.id, ['users:write'])).key;
    const byKey = await call(env, 'POST', '/users', { token: key, body: { email: 'second.admin@example.com', name: 'Second Admin', role: 'admin' } });
    t.equal(byKey.statusCode, 201);
    const [audit] = await auditRows(env, tenant.id, 'user.created').where('resource_id', byKey.json().id);
    t.equal(audit.actor_type, 'api_key');
    // A key that holds users:write but whose owner is not an admin may not hand out the admin role.
    const agentKeyActor: Actor = { type: 'api_key', userId: agent.id, name: 'agent key', role: 'agent', apiKeyId: null, sessionId: null, scopes: ['users:write'] };
    const refused = await inTransaction(env.deps, { tenantId: tenant.id, actor: agentKeyActor, now: new Date() }, (ctx) =>
      createUser(ctx, { email: 'sneaky@example.com', name: 'Sneaky', role: 'admin' }),
    ).catch((error: AppError) => error);
    t.equal((refused as AppError).code, 'forbidden');
    t.notOk(await env.deps.db('users').where({ tenant_id: tenant.id, email: 'sneaky@example.com' }).first());
  });

  await t.test('GET /users filters, sorts and pages', async (t) => {
    for (const [email, name] of [['zed@example.com', 'Zed 100%'], ['amy@example.com', 'Amy'], ['bob@sample.org', 'Bob']]) {
      t.equal((await call(env, 'POST', '/users', { token: admin, body: { email, name } })).statusCode, 201);
    }
    const all = await call(env, 'GET', '/users', { token: agent.token });
    t.equal(all.statusCode, 200);
    t.same(all.json().meta, { page: 1, page_size: 20, total: all.json().data.length });
    t.ok(all.json().data.every((u: Record<string, unknown>) => !('password_hash' in u)));

    const customers = await call(env, 'GET', '/users', { token: admin, query: { role: 'customer', sort_by: 'name', sort_dir: 'desc' } });
    const names = customers.json().data.map((u: { name: string }) => u.name);
    const expected = await env.deps.db('users').where({ tenant_id: tenant.id, role: 'customer' }).orderBy('name', 'desc').orderBy('id', 'desc').pluck('name');
    t.same(names, expected, 'sorted by name, descending');
    t.ok(customers.json().data.every((u: { role: string }) => u.role === 'customer'));

    const q = await call(env, 'GET', '/users', { token: admin, query: { q: 'SAMPLE' } });
    t.same(q.json().data.map((u: { email: string }) => u.email), ['bob@sample.org'], 'q matches email case-insensitively');
    const literal = await call(env, 'GET', '/users', { token: admin, query: { q: '0%' } });
    t.same(literal.json().data.map((u: { name: string }) => u.name), ['Zed 100%'], '% is literal, not a wildcard');

    const page2 = await call(env, 'GET', '/users', { token: admin, query: { page: '2', page_size: '2', sort_by: 'email' } });
    const emails = (await call(env, 'GET', '/users', { token: admin, query: { sort_by: 'email', page_size: '100' } })).json().data.map((u: { email: string }) => u.email);
    t.same(page2.json().data.map((u: { email: string }) => u.email), emails.slice(2, 4));
    t.same(page2.json().meta, { page: 2, page_size: 2, total: emails.length });

    const bad = await call(env, 'GET', '/users', { token: admin, query: { page_size: '101', page: '0', role: 'boss', active: 'maybe', sort_by: 'age' } });
    t.equal(bad.statusCode, 422);
    t.same((bad.json().details as Array<{ field: string }>).map((d) => d.field).sort(), ['active', 'page', 'page_size', 'role', 'sort_by']);
    t.equal((await call(env, 'GET', '/users', { token: admin, query: { page_size: '0' } })).statusCode, 422);
  });

  await t.test('GET /users/:id', async (t) => {
    const res = await call(env, 'GET', `/users/${customer.id}`, { token: agent.token });
    t.equal(res.statusCode, 200);
    t.equal(res.json().email, customer.email);
    for (const id of ['0190a1b2-0000-7000-8000-0000000000ff', 'not-a-uuid', otherCustomer.id]) {
      const missing = await call(env, 'GET', `/users/${id}`, { token: admin });
      t.equal(missing.statusCode, 404, id);
      t.equal(missing.json().code, 'resource_not_found');
    }
  });

  await t.test('PATCH /users/:id updates the profile and audits the diff', async (t) => {
    const oldName = (await env.deps.db('users').where({ tenant_id: tenant.id, id: customer.id }).first()).name;
    const res = await call(env, 'PATCH', `/users/${customer.id}`, {
      token: admin, body: { name: 'Renamed', is_vip: true, custom_fields: { plan: 'pro' }, phone: '+1 555', timezone: 'America/New_York' },
    });
    t.equal(res.statusCode, 200);
    t.match(res.json(), { name: 'Renamed', is_vip: true, custom_fields: { plan: 'pro' }, phone: '+1 555', timezone: 'America/New_York' });
    const [audit] = await auditRows(env, tenant.id, 'user.updated').where('resource_id', customer.id);
    t.same(audit.changes, {
      name: { from: oldName, to: 'Renamed' },
      is_vip: { from: false, to: true },
      custom_fields: { from: {}, to: { plan: 'pro' } },
      phone: { from: null, to: '+1 555' },
      timezone: { from: null, to: 'America/New_York' },
    });
    const cleared = await call(env, 'PATCH', `/users/${customer.id}`, { token: admin, body: { phone: null } });
    t.equal(cleared.json().phone, null);
    const same = await call(env, 'PATCH', `/users/${customer.id}`, { token: admin, body: { phone: null } });
    t.equal(same.statusCode, 200);
    t.equal((await auditRows(env, tenant.id, 'user.updated').where('resource_id', customer.id)).length, 2, 'no change, no audit row');

    const dup = await call(env, 'PATCH', `/users/${customer.id}`, { token: admin, body: { email: agent.email.toUpperCase() } });
    t.equal(dup.statusCode, 409);
    t.equal(dup.json().code, 'already_exists');
    const bad = await call(env, 'PATCH', `/users/${customer.id}`, { token: admin, body: { role: 'admin', email: 'x', locale: 'not a locale!' } });
    t.equal(bad.statusCode, 422);
    t.same((bad.json().details as Array<{ field: string }>).map((d) => d.field).sort(), ['email', 'locale', 'role']);
    const byAgent = await call(env, 'PATCH', `/users/${customer.id}`, { token: agent.token, body: { name: 'Agent was here' } });
    t.equal(byAgent.statusCode, 403);
    t.equal((await call(env, 'PATCH', `/users/${otherCustomer.id}`, { token: admin, body: { name: 'x' } })).statusCode, 404);
    const untouched = await env.deps.db('users').where({ tenant_id: other.id, id: otherCustomer.id }).first();
    t.not(untouched.name, 'x');
  });

  await t.test('deactivation signs the user out; self and last-admin deactivation are refused', async (t) => {
    const victim = await userFixture(env, tenant.id, 'agent');
    t.equal((await call(env, 'GET', '/users', { token: victim.token })).statusCode, 200);
    const res = await call(env, 'PATCH', `/users/${victim.id}`, { token: admin, body: { active: false } });
    t.equal(res.statusCode, 200);
    t.equal(res.json().active, false);
    t.equal((await call(env, 'GET', '/users', { token: victim.token })).statusCode, 401, 'their session is gone');
    const sessions = await env.deps.db('sessions').where({ tenant_id: tenant.id, user_id: victim.id }).whereNull('revoked_at');
    t.equal(sessions.length, 0);

    const self = await call(env, 'PATCH', `/users/${tenant.admin.id}`, { token: admin, body: { active: false } });
    t.equal(self.statusCode, 409);
    t.equal(self.json().code, 'conflict');

    // The CLI operator is nobody's self; it still may not leave the tenant without an active admin.
    const team = await tenantFixture(env);
    const second = await userFixture(env, team.id, 'admin');
    const deactivate = (id: string) =>
      inTransaction(env.deps, { tenantId: team.id, actor: CLI_ACTOR, now: new Date() }, (ctx) => updateUser(ctx, id, { active: false }))
        .then(() => 'ok', (error: AppError) => error.code);
    t.equal(await deactivate(team.admin.id), 'ok');
    t.equal(await deactivate(second.id), 'conflict', 'the last active admin stays');
    t.equal((await env.deps.db('users').where({ tenant_id: team.id, id: second.id }).first()).active, true);
  });

  await t.test('PATCH /users/:id/role', async (t) => {
    const person = await userFixture(env, tenant.id, 'customer');
    const res = await call(env, 'PATCH', `/users/${person.id}/role`, { token: admin, body: { role: 'agent' } });
    t.equal(res.statusCode, 200);
    t.equal(res.json().role, 'agent');
    const [audit] = await auditRows(env, tenant.id, 'user.role_changed').where('resource_id', person.id);
    t.same(audit.changes, { from: 'customer', to: 'agent' });
    // The session's scopes follow the role at once.
    t.equal((await call(env, 'GET', '/users', { token: person.token })).statusCode, 200);

    const bad = await call(env, 'PATCH', `/users/${person.id}/role`, { token: admin, body: { role: 'owner' } });
    t.equal(bad.statusCode, 422);
    t.same(bad.json().details, [{ field: 'role', message: 'must be one of admin, agent, customer' }]);
    t.equal((await call(env, 'PATCH', `/users/${person.id}/role`, { token: admin, body: {} })).statusCode, 422);
    t.equal((await call(env, 'PATCH', `/users/${person.id}/role`, { token: agent.token, body: { role: 'admin' } })).statusCode, 403);
    t.equal((await call(env, 'PATCH', `/users/${otherCustomer.id}/role`, { token: admin, body: { role: 'agent' } })).statusCode, 404);
    t.equal((await env.deps.db('users').where({ tenant_id: other.id, id: otherCustomer.id }).first()).role, 'customer');
  });

  await t.test('the last active admin cannot demote themselves', async (t) => {
    const solo = await tenantFixture(env);
    const res = await call(env, 'PATCH', `/users/${solo.admin.id}/role`, { token: solo.admin.token, body: { role: 'agent' } });
    t.equal(res.statusCode, 409);
    t.equal(res.json().code, 'conflict');
    t.match(res.json().message, /last active admin/);
    t.equal((await env.deps.db('users').where({ tenant_id: solo.id, id: solo.admin.id }).first()).role, 'admin');
    t.equal((await auditRows(env, solo.id, 'user.role_changed')).length, 0);
  });

  t.same(env.guard.violations, [], 'every query was tenant-scoped');
});
