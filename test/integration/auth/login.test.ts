import t from 'tap';
import { call, csrfToken, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { issueCsrfToken } from '../../../src/auth/csrf.js';
import { uuidv7 } from '../../../src/core/ids.js';

const withoutRequestId = (body: Record<string, unknown>) => {
  const { request_id: _ignored, ...rest } = body;
  return rest;
};

t.test('CSRF tokens guard the public routes', async (t) => {
  const env = await testApp(t);
  const a = await tenantFixture(env);
  const b = await tenantFixture(env);
  const body = { email: a.admin.email, password: a.admin.password };

  const issued = await call(env, 'GET', '/auth/csrf', { tenant: a.slug });
  t.equal(issued.statusCode, 200);
  t.match(issued.json(), { csrf_token: /^[\w-]+\.[\w-]+$/, expires_at: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/ });
  const lifetime = Date.parse(issued.json().expires_at) - Date.now();
  t.ok(lifetime > 119 * 60_000 && lifetime <= 120 * 60_000, 'valid two hours');

  for (const [label, csrf] of [
    ['missing', undefined],
    ['garbage', 'not-a-token'],
    ['tampered', issued.json().csrf_token.replace(/.$/, (c: string) => (c === 'A' ? 'B' : 'A'))],
    ["another tenant's", await csrfToken(env, b.slug)],
    ['expired', issueCsrfToken(env.deps.box, a.id, new Date(Date.now() - 3 * 3600_000)).token],
  ] as const) {
    const res = await call(env, 'POST', '/auth/login', { tenant: a.slug, csrf, body });
    t.equal(res.statusCode, 403, `${label} CSRF token: 403`);
    t.equal(res.json().code, 'csrf_invalid');
  }
  t.equal(await env.deps.db('login_attempts').count('* as n').first().then((r) => Number(r!.n)), 0, 'refused before any attempt was recorded');

  const unknown = await call(env, 'GET', '/auth/csrf', { tenant: 'no-such-tenant' });
  t.equal(unknown.statusCode, 404);
  t.equal(unknown.json().code, 'tenant_not_found');
  const none = await call(env, 'POST', '/auth/login', { body });
  t.equal(none.statusCode, 404);
  t.equal(none.json().code, 'tenant_not_found');
});

t.test('login: happy path, identical refusals, validation', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const csrf = await csrfToken(env, tenant.slug);

  await t.test('right password signs in; the token works', async (t) => {
    const res = await call(env, 'POST', '/auth/login', {
      tenant: tenant.slug, csrf, body: { email: agent.email.toUpperCase(), password: agent.password }, headers: { 'user-agent': 'tap-test/1.0' },
    });
    t.equal(res.statusCode, 200);
    const answer = res.json();
    t.match(answer, { token: /^hds_[\w-]{43}$/, token_type: 'Bearer' });
    t.same(answer.user, { id: agent.id, email: agent.email, name: (await env.deps.db('users').where({ id: agent.id }).first()).name, role: 'agent' });
    const lifetime = Date.parse(answer.expires_at) - Date.now();
    t.ok(lifetime > 23.9 * 3600_000 && lifetime <= 24 * 3600_000, 'session lasts 24 hours');

    const me = await call(env, 'GET', '/auth/me', { token: answer.token });
    t.equal(me.statusCode, 200);
    t.equal(me.json().id, agent.id);
    t.ok(me.json().last_login_at, 'last_login_at is set');

    const session = await env.deps.db('sessions').where({ tenant_id: tenant.id, user_id: agent.id }).orderBy('created_at', 'desc').first();
    t.equal(session.user_agent, 'tap-test/1.0');
    t.not(session.token_hash, answer.token, 'only the hash is stored');
    const attempt = await env.deps.db('login_attempts').where({ tenant_id: tenant.id, email: agent.email }).first();
    t.match(attempt, { succeeded: true, ip: '127.0.0.1' });
    const audit = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'user.login', resource_id: agent.id }).first();
    t.match(audit, { actor_type: 'user', actor_id: agent.id, resource_type: 'user' });
  });

  await t.test('unknown email, wrong password, deactivated user, no password: one answer', async (t) => {
    const inactive = await userFixture(env, tenant.id, 'agent');
    await env.deps.db('users').where({ tenant_id: tenant.id, id: inactive.id }).update({ active: false });
    const passwordless = await userFixture(env, tenant.id, 'customer');
    await env.deps.db('users').where({ tenant_id: tenant.id, id: passwordless.id }).update({ password_hash: null });

    const bodies = [
      { email: 'nobody@example.com', password: agent.password },
      { email: agent.email, password: 'wrong password entirely' },
      { email: inactive.email, password: inactive.password },
      { email: passwordless.email, password: '' + 'anything long enough' },
    ];
    const answers = [];
    for (const body of bodies) {
      const res = await call(env, 'POST', '/auth/login', { tenant: tenant.slug, csrf, body });
      answers.push({ status: res.statusCode, body: withoutRequestId(res.json()) });
    }
    t.same(answers[0], { status: 401, body: { code: 'invalid_credentials', message: 'Email or password is incorrect' } });
    for (const answer of answers.slice(1)) t.same(answer, answers[0]);
    const failures = await env.deps.db('login_attempts').where({ tenant_id: tenant.id, succeeded: false }).select('email');
    t.same(failures.map((f) => f.email).sort(), bodies.map((b) => b.email.toLowerCase()).sort(), 'every failure recorded');
  });

  await t.test('malformed bodies: 422 with one detail per problem', async (t) => {
    const empty = await call(env, 'POST', '/auth/login', { tenant: tenant.slug, csrf, body: {} });
    t.equal(empty.statusCode, 422);
    t.same(empty.json().details, [{ field: 'email', message: 'is required' }, { field: 'password', message: 'is required' }]);
    const extra = await call(env, 'POST', '/auth/login', { tenant: tenant.slug, csrf, body: { email: agent.email, password: agent.password, remember: true } });
    t.equal(extra.statusCode, 422);
    t.same(extra.json().details, [{ field: 'remember', message: 'is not allowed' }]);
  });
});

t.test('10 failures in 15 minutes lock the address', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const csrf = await csrfToken(env, tenant.slug);
  const login = (email: string, password: string) => call(env, 'POST', '/auth/login', { tenant: tenant.slug, csrf, body: { email, password } });

  for (let i = 0; i < 9; i++) t.equal((await login(agent.email, `wrong password ${i}`)).statusCode, 401);
  t.equal((await login(agent.email, agent.password)).statusCode, 200, 'nine failures do not lock');
  t.equal((await login(agent.email, 'wrong password 10')).statusCode, 401, 'the tenth failure is still a 401');

  const locked = await login(agent.email, agent.password);
  t.equal(locked.statusCode, 429, 'the 11th attempt is refused even with the right password');
  t.equal(locked.json().code, 'rate_limited');
  const retryAfter = Number(locked.headers['retry-after']);
  t.ok(retryAfter > 880 && retryAfter <= 900, `Retry-After counts down from 15 minutes (${retryAfter})`);
  const recorded = await env.deps.db('login_attempts').where({ tenant_id: tenant.id, email: agent.email }).count('* as n').first();
  t.equal(Number(recorded!.n), 11, 'the refused attempt is not recorded');

  t.equal((await login(agent.email.toUpperCase(), agent.password)).statusCode, 429, 'the lock ignores case');
  t.equal((await login('other@example.com', 'wrong password')).statusCode, 401, 'other addresses are unaffected');

  // Failures spread over the past: the lock lifts when the oldest of the ten leaves the window.
  const now = Date.now();
  await env.deps.db('login_attempts').insert(Array.from({ length: 10 }, (_, i) => ({
    tenant_id: tenant.id, id: uuidv7(), email: 'ghost@example.com', ip: '10.0.0.1', succeeded: false,
    created_at: new Date(now - (14 * 60 - i * 30) * 1000),
  })));
  const ghost = await login('ghost@example.com', 'whatever it is');
  t.equal(ghost.statusCode, 429, 'unknown addresses lock too');
  const ghostRetry = Number(ghost.headers['retry-after']);
  t.ok(ghostRetry >= 55 && ghostRetry <= 61, `Retry-After is the time until the oldest failure leaves (${ghostRetry})`);

  await env.deps.db('login_attempts').insert({
    tenant_id: tenant.id, id: uuidv7(), email: 'old@example.com', ip: null, succeeded: false, created_at: new Date(now - 16 * 60_000),
  });
  await env.deps.db('login_attempts').insert(Array.from({ length: 9 }, () => ({
    tenant_id: tenant.id, id: uuidv7(), email: 'old@example.com', ip: null, succeeded: false, created_at: new Date(now - 60_000),
  })));
  t.equal((await login('old@example.com', 'whatever it is')).statusCode, 401, 'failures older than 15 minutes do not count');
});

t.test('logout and session expiry', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const csrf = await csrfToken(env, tenant.slug);

  const signIn = async () => (await call(env, 'POST', '/auth/login', { tenant: tenant.slug, csrf, body: { email: agent.email, password: agent.password } })).json().token as string;

  const token = await signIn();
  const wrongTenantCsrf = await call(env, 'POST', '/auth/logout', { token, csrf: await csrfToken(env, other.slug) });
  t.equal(wrongTenantCsrf.statusCode, 403, 'the CSRF token must belong to the token\'s tenant');
  t.equal((await call(env, 'GET', '/auth/me', { token })).statusCode, 200, 'still signed in');

  const out = await call(env, 'POST', '/auth/logout', { token, csrf });
  t.equal(out.statusCode, 204);
  t.equal(out.body, '');
  const after = await call(env, 'GET', '/auth/me', { token });
  t.equal(after.statusCode, 401);
  t.equal(after.json().code, 'unauthenticated');
  t.equal((await call(env, 'POST', '/auth/logout', { token, csrf, tenant: tenant.slug })).statusCode, 204, 'again: still 204');
  t.equal((await call(env, 'POST', '/auth/logout', { csrf, tenant: tenant.slug })).statusCode, 204, 'without a token: 204');
  t.equal((await call(env, 'POST', '/auth/logout', { token: tenant.apiKey, csrf })).statusCode, 204, 'an API key: 204');
  t.equal((await call(env, 'GET', '/auth/me', { token: tenant.apiKey })).statusCode, 200, 'and the key is not revoked');
  t.equal((await call(env, 'GET', '/auth/me', { token: agent.token })).statusCode, 200, 'other sessions of the user live on');

  const expiring = await signIn();
  await env.deps.db('sessions').where({ tenant_id: tenant.id, user_id: agent.id }).whereNull('revoked_at')
    .orderBy('created_at', 'desc').limit(1).update({ expires_at: new Date(Date.now() - 1000) });
  const expired = await call(env, 'GET', '/auth/me', { token: expiring });
  t.equal(expired.statusCode, 401, 'an expired session is refused');
  t.equal(expired.json().code, 'unauthenticated');
});
