import t from 'tap';
import { call, csrfToken, testApp, tenantFixture, userFixture } from '../../helpers/app.js';

t.test('GET and PATCH /auth/me', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const customer = await userFixture(env, tenant.id, 'customer');

  t.equal((await call(env, 'GET', '/auth/me')).statusCode, 401);
  const me = await call(env, 'GET', '/auth/me', { token: customer.token });
  t.equal(me.statusCode, 200);
  const profile = me.json();
  t.same(Object.keys(profile).sort(), [
    'avatar_url', 'created_at', 'email', 'id', 'last_login_at', 'locale', 'name', 'notification_preferences', 'organization_id', 'phone',
    'role', 'timezone', 'two_factor_enabled', 'updated_at',
  ]);
  t.match(profile, { id: customer.id, email: customer.email, role: 'customer', phone: null, timezone: null, created_at: /^\d{4}-.*\.\d{3}Z$/ });
  const viaKey = await call(env, 'GET', '/auth/me', { token: tenant.apiKey });
  t.equal(viaKey.json().id, tenant.admin.id, 'an API key sees its owner');

  const patched = await call(env, 'PATCH', '/auth/me', {
    token: customer.token,
    body: { name: ' Bea Souza ', phone: '+55 11 5555-0100', avatar_url: 'https://cdn.example.com/bea.png', timezone: 'America/Sao_Paulo', locale: 'pt-BR' },
  });
  t.equal(patched.statusCode, 200);
  t.match(patched.json(), { name: 'Bea Souza', phone: '+55 11 5555-0100', avatar_url: 'https://cdn.example.com/bea.png', timezone: 'America/Sao_Paulo', locale: 'pt-BR' });
  t.same((await call(env, 'GET', '/auth/me', { token: customer.token })).json(), patched.json(), 'stored');
  const audit = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'user.updated', resource_id: customer.id }).first();
  t.same(audit.changes.timezone, { from: null, to: 'America/Sao_Paulo' });
  t.same(audit.changes.name.to, 'Bea Souza');

  const cleared = await call(env, 'PATCH', '/auth/me', { token: customer.token, body: { phone: null, timezone: null } });
  t.match(cleared.json(), { phone: null, timezone: null, name: 'Bea Souza', locale: 'pt-BR' }, 'null clears; absent fields stay');

  const auditsBefore = (await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'user.updated' })).length;
  t.equal((await call(env, 'PATCH', '/auth/me', { token: customer.token, body: { locale: 'pt-BR' } })).statusCode, 200);
  t.equal((await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'user.updated' })).length, auditsBefore, 'no change, no audit');

  const bad = await call(env, 'PATCH', '/auth/me', {
    token: customer.token, body: { timezone: 'Mars/Olympus_Mons', avatar_url: 'javascript:alert(1)', name: '   ' },
  });
  t.equal(bad.statusCode, 422);
  // Form rules are in the schema; the zone database only the service knows, after them.
  t.same(bad.json().details, [
    { field: 'name', message: 'must not be blank' },
    { field: 'avatar_url', message: 'must be an http or https URL' },
  ]);
  const zone = await call(env, 'PATCH', '/auth/me', { token: customer.token, body: { timezone: 'Mars/Olympus_Mons' } });
  t.same(zone.json().details, [{ field: 'timezone', message: 'must be an IANA time zone name such as Europe/Berlin' }]);
  const unknown = await call(env, 'PATCH', '/auth/me', { token: customer.token, body: { role: 'admin', email: 'x@example.com', locale: 'not a locale!' } });
  t.equal(unknown.statusCode, 422);
  t.same(unknown.json().details.map((d: { field: string }) => d.field).sort(), ['email', 'locale', 'role']);
  const user = await env.deps.db('users').where({ tenant_id: tenant.id, id: customer.id }).first();
  t.match(user, { role: 'customer', email: customer.email, timezone: null }, 'refused patches wrote nothing');
  t.equal((await call(env, 'PATCH', '/auth/me', { body: { name: 'x' } })).statusCode, 401);
});

t.test('PATCH /auth/me/password', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const csrf = await csrfToken(env, tenant.slug);
  const login = (password: string) => call(env, 'POST', '/auth/login', { tenant: tenant.slug, csrf, body: { email: agent.email, password } });
  const otherSession = (await login(agent.password)).json().token;
  const change = (body: unknown, token = agent.token) => call(env, 'PATCH', '/auth/me/password', { token, body });

  // The policy is in the schema: a short new password is refused before the current one is tried.
  const short = await change({ current_password: 'not the password', new_password: 'short' });
  t.equal(short.statusCode, 422);
  t.same(short.json().details, [{ field: 'new_password', message: 'must be at least 12 characters' }]);
  const wrong = await change({ current_password: 'not the password', new_password: 'a new long passphrase' });
  t.equal(wrong.statusCode, 422);
  t.same(wrong.json().details, [{ field: 'current_password', message: 'is incorrect' }]);
  const missing = await change({});
  t.same(missing.json().details.map((d: { field: string }) => d.field), ['current_password', 'new_password']);
  const byKey = await change({ current_password: tenant.admin.password, new_password: 'a fresh long passphrase' }, tenant.apiKey);
  t.equal(byKey.statusCode, 403, 'an API key may not change the password');
  t.equal(byKey.json().code, 'forbidden');
  t.equal((await change({ current_password: agent.password, new_password: 'x'.repeat(12) }, '')).statusCode, 401);
  t.equal((await login(agent.password)).statusCode, 200, 'refusals changed nothing');

  const ok = await change({ current_password: agent.password, new_password: 'a fresh long passphrase' });
  t.equal(ok.statusCode, 204);
  t.equal((await call(env, 'GET', '/auth/me', { token: agent.token })).statusCode, 200, 'the caller stays signed in');
  t.equal((await call(env, 'GET', '/auth/me', { token: otherSession })).statusCode, 401, 'other sessions end');
  t.equal((await login(agent.password)).statusCode, 401, 'old password refused');
  t.equal((await login('a fresh long passphrase')).statusCode, 200, 'new password works');
  t.ok(await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'user.password_changed', resource_id: agent.id }).first());
});
