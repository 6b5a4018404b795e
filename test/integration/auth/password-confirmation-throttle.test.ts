import t from 'tap';
import { call, csrfToken, testApp, tenantFixture } from '../../helpers/app.js';

// A signed-in caller who re-confirms a password (password change, 2FA disable) is throttled like
// a sign-in: a stolen session is no way to guess the password.
t.test('wrong current passwords count toward the sign-in throttle', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const token = tenant.admin.token;
  const hashOf = async () => (await env.deps.db('users').where({ tenant_id: tenant.id, id: tenant.admin.id }).first('password_hash')).password_hash;
  const originalHash = await hashOf();

  for (let i = 0; i < 5; i++) {
    const res = await call(env, 'PATCH', '/auth/me/password', { token, body: { current_password: `wrong guess ${i}`, new_password: 'a brand new password' } });
    t.equal(res.statusCode, 422);
  }
  for (let i = 0; i < 5; i++) {
    const res = await call(env, 'POST', '/2fa/disable', { token, body: { password: `wrong guess ${i}` } });
    t.equal(res.statusCode, 422);
  }
  const failures = await env.deps.db('login_attempts').where({ tenant_id: tenant.id, email: tenant.admin.email, succeeded: false }).count({ n: '*' });
  t.equal(Number(failures[0]!.n), 10, 'every wrong password was recorded, though its request rolled back');

  const locked = await call(env, 'PATCH', '/auth/me/password', { token, body: { current_password: tenant.admin.password, new_password: 'a brand new password' } });
  t.equal(locked.statusCode, 429, 'the right password is refused while locked');
  t.equal(locked.json().code, 'rate_limited');
  t.ok(Number(locked.headers['retry-after']) > 0);

  const csrf = await csrfToken(env, tenant.slug);
  const login = await call(env, 'POST', '/auth/login', { tenant: tenant.slug, csrf, body: { email: tenant.admin.email, password: tenant.admin.password } });
  t.equal(login.statusCode, 429, 'sign-in for that account is locked too');
  t.equal(await hashOf(), originalHash, 'the password did not change');
});
