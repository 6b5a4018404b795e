import t from 'tap';
import { call, csrfToken, testApp, tenantFixture } from '../../helpers/app.js';

t.test('customer self-registration', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const csrf = await csrfToken(env, tenant.slug);
  const register = (body: unknown, tenantSlug = tenant.slug, token = csrf) =>
    call(env, 'POST', '/auth/register', { tenant: tenantSlug, csrf: token, body });
  const users = () => env.deps.db('users').where({ tenant_id: tenant.id }).count('* as n').first().then((r) => Number(r!.n));
  const before = await users();

  const created = await register({ email: 'Ana.Lima@Example.com', name: '  Ana Lima ', password: 'a long enough passphrase' });
  t.equal(created.statusCode, 201);
  const answer = created.json();
  t.match(answer, { token: /^hds_/, token_type: 'Bearer', expires_at: /Z$/, user: { email: 'ana.lima@example.com', name: 'Ana Lima', role: 'customer' } });
  const me = await call(env, 'GET', '/auth/me', { token: answer.token });
  t.equal(me.statusCode, 200, 'signed in at once');
  t.match(me.json(), { id: answer.user.id, role: 'customer', two_factor_enabled: false });
  t.ok(me.json().last_login_at);
  const audit = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'user.registered' }).first();
  t.match(audit, { actor_type: 'user', actor_id: answer.user.id, resource_id: answer.user.id });

  const taken = await register({ email: 'ana.lima@EXAMPLE.com', name: 'Someone', password: 'a long enough passphrase' });
  t.equal(taken.statusCode, 409);
  t.equal(taken.json().code, 'already_exists');
  const elsewhere = await register({ email: 'ana.lima@example.com', name: 'Ana', password: 'a long enough passphrase' }, other.slug, await csrfToken(env, other.slug));
  t.equal(elsewhere.statusCode, 201, 'the same address may register in another tenant');

  const invalid = await register({ email: 'not-an-email', name: '', password: 'x', role: 'admin' });
  t.equal(invalid.statusCode, 422);
  t.same(invalid.json().details.map((d: { field: string }) => d.field).sort(), ['email', 'name', 'password', 'role']);
  const weak = await register({ email: 'weak@example.com', name: '   ', password: 'too short' });
  t.same(weak.json().details, [{ field: 'name', message: 'must not be blank' }, { field: 'password', message: 'must be at least 12 characters' }]);
  t.equal((await register({ email: 'nocsrf@example.com', name: 'No', password: 'a long enough passphrase' }, tenant.slug, '')).statusCode, 403);
  t.equal(await users(), before + 1, 'refused registrations wrote nothing');
});
