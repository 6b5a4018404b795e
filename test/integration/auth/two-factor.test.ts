import t from 'tap';
import { generate } from 'otplib';
import { call, csrfToken, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { uuidv7 } from '../../../src/core/ids.js';

t.test('two-factor enrolment and sign-in', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const csrf = await csrfToken(env, tenant.slug);
  const token = agent.token;
  const userRow = () => env.deps.db('users').where({ tenant_id: tenant.id, id: agent.id }).first();
  const login = () => call(env, 'POST', '/auth/login', { tenant: tenant.slug, csrf, body: { email: agent.email, password: agent.password } });
  const second = (challenge_token: string, code: string) => call(env, 'POST', '/auth/login/2fa', { tenant: tenant.slug, csrf, body: { challenge_token, code } });

  t.same((await call(env, 'GET', '/2fa', { token })).json(), { enabled: false });
  t.equal((await call(env, 'POST', '/2fa/confirm', { token, body: { code: '123456' } })).statusCode, 409, 'confirm before setup: 409');

  const setup = await call(env, 'POST', '/2fa/setup', { token });
  t.equal(setup.statusCode, 200);
  const { secret, otpauth_uri } = setup.json();
  t.match(secret, /^[A-Z2-7]{32}$/, 'a base32 secret');
  t.equal(otpauth_uri, `otpauth://totp/Helpdesk:${encodeURIComponent(agent.email)}?secret=${secret}&issuer=Helpdesk`);
  const pending = await userRow();
  t.ok(pending.two_factor_pending_secret_enc, 'pending secret stored');
  t.notOk(pending.two_factor_pending_secret_enc.includes(secret), 'encrypted at rest');
  t.equal(pending.two_factor_enabled, false);

  const wrong = await call(env, 'POST', '/2fa/confirm', { token, body: { code: '000000' === await generate({ secret }) ? '111111' : '000000' } });
  t.equal(wrong.statusCode, 401);
  t.equal(wrong.json().code, 'invalid_two_factor_code');
  t.equal((await userRow()).two_factor_enabled, false, 'a wrong code enables nothing');
  const malformed = await call(env, 'POST', '/2fa/confirm', { token, body: {} });
  t.same(malformed.json().details, [{ field: 'code', message: 'is required' }]);

  const confirmEpoch = Math.floor(Date.now() / 1000);
  const confirmCode = await generate({ secret, epoch: confirmEpoch });
  const confirmed = await call(env, 'POST', '/2fa/confirm', { token, body: { code: confirmCode } });
  t.equal(confirmed.statusCode, 200);
  const recoveryCodes: string[] = confirmed.json().recovery_codes;
  t.equal(confirmed.json().enabled, true);
  t.equal(recoveryCodes.length, 10);
  t.equal(new Set(recoveryCodes).size, 10, 'all different');
  for (const code of recoveryCodes) t.match(code, /^[0-9a-z]{5}-[0-9a-z]{5}$/);
  const enabled = await userRow();
  t.match(enabled, { two_factor_enabled: true, two_factor_pending_secret_enc: null, two_factor_secret_enc: pending.two_factor_pending_secret_enc });
  const stored = await env.deps.db('recovery_codes').where({ tenant_id: tenant.id, user_id: agent.id }).select('code_hash');
  t.equal(stored.length, 10);
  t.notOk(stored.some((r) => recoveryCodes.some((c) => r.code_hash.includes(c.replace('-', '')))), 'codes stored hashed');
  t.ok(await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'user.two_factor_enabled', resource_id: agent.id }).first());

  t.same((await call(env, 'GET', '/2fa', { token })).json(), { enabled: true });
  t.equal((await call(env, 'POST', '/2fa/setup', { token })).statusCode, 409, 'setup while enabled: 409');
  t.equal((await call(env, 'POST', '/2fa/confirm', { token, body: { code: confirmCode } })).statusCode, 409, 'confirm while enabled: 409');

  await t.test('sign-in asks for the second factor', async (t) => {
    const first = await login();
    t.equal(first.statusCode, 200);
    t.same(Object.keys(first.json()).sort(), ['challenge_token', 'two_factor_required']);
    t.equal(first.json().two_factor_required, true);
    const challenge = first.json().challenge_token;
    const row = await env.deps.db('login_challenges').where({ tenant_id: tenant.id, user_id: agent.id }).first();
    t.not(row.token_hash, challenge, 'challenge stored hashed');
    t.ok(Math.abs(row.expires_at.getTime() - row.created_at.getTime() - 300_000) < 1000, 'valid 5 minutes');

    const reused = await second(challenge, confirmCode);
    t.equal(reused.statusCode, 401, 'the code spent on confirmation is refused');
    t.equal(reused.json().code, 'invalid_two_factor_code');

    const nextCode = await generate({ secret, epoch: confirmEpoch + 30 });
    const done = await second(challenge, nextCode);
    t.equal(done.statusCode, 200);
    t.match(done.json(), { token: /^hds_/, token_type: 'Bearer', user: { id: agent.id, role: 'agent' } });
    t.equal((await call(env, 'GET', '/auth/me', { token: done.json().token })).statusCode, 200, 'the token works');

    t.equal((await second(challenge, recoveryCodes[9]!)).statusCode, 401, 'a challenge is single use');
    const again = await login();
    const replay = await second(again.json().challenge_token, nextCode);
    t.equal(replay.statusCode, 401, 'the same TOTP code is accepted once');

    const recovered = await second(again.json().challenge_token, recoveryCodes[0]!.toUpperCase().replace('-', ' - '));
    t.equal(recovered.statusCode, 200, 'a recovery code works (case and spacing ignored)');
    const third = await login();
    t.equal((await second(third.json().challenge_token, recoveryCodes[0]!)).statusCode, 401, 'a recovery code works once');
    t.equal((await env.deps.db('recovery_codes').where({ tenant_id: tenant.id, user_id: agent.id }).whereNotNull('used_at').count('* as n').first())!.n, '1');

    const other2fa = await call(env, 'POST', '/auth/login/2fa', {
      tenant: other.slug, csrf: await csrfToken(env, other.slug), body: { challenge_token: third.json().challenge_token, code: recoveryCodes[1]! },
    });
    t.equal(other2fa.statusCode, 401, "a challenge does not work in another tenant");
  });

  await t.test('a challenge dies after 5 wrong codes or 5 minutes', async (t) => {
    const failuresBefore = Number((await env.deps.db('login_attempts').where({ tenant_id: tenant.id, succeeded: false }).count('* as n').first())!.n);
    const challenge = (await login()).json().challenge_token;
    for (let i = 0; i < 5; i++) t.equal((await second(challenge, `00000${i}`)).statusCode, 401);
    t.equal((await second(challenge, recoveryCodes[2]!)).statusCode, 401, 'dead after five wrong codes');
    const failuresAfter = Number((await env.deps.db('login_attempts').where({ tenant_id: tenant.id, succeeded: false }).count('* as n').first())!.n);
    t.equal(failuresAfter - failuresBefore, 5, 'each wrong code counts as a failed sign-in');

    const late = (await login()).json().challenge_token;
    await env.deps.db('login_challenges').where({ tenant_id: tenant.id }).whereNull('used_at').update({ expires_at: new Date(Date.now() - 1000) });
    t.equal((await second(late, recoveryCodes[2]!)).statusCode, 401, 'expired');
    t.equal((await second('no-such-challenge', recoveryCodes[2]!)).statusCode, 401, 'unknown');
    const malformed = await call(env, 'POST', '/auth/login/2fa', { tenant: tenant.slug, csrf, body: { challenge_token: '' } });
    t.equal(malformed.statusCode, 422);
    t.same(malformed.json().details.map((d: { field: string }) => d.field).sort(), ['challenge_token', 'code']);
  });

  await t.test('the sign-in throttle also guards the second step', async (t) => {
    const challenge = (await login()).json().challenge_token;
    await env.deps.db('login_attempts').insert(Array.from({ length: 10 }, () => ({
      tenant_id: tenant.id, id: uuidv7(), email: agent.email, ip: null, succeeded: false, created_at: new Date(),
    })));
    const locked = await second(challenge, recoveryCodes[3]!);
    t.equal(locked.statusCode, 429);
    t.ok(Number(locked.headers['retry-after']) > 0);
    t.equal((await env.deps.db('recovery_codes').where({ tenant_id: tenant.id, user_id: agent.id }).whereNotNull('used_at')).length, 1, 'no code spent');
    await env.deps.db('login_attempts').where({ tenant_id: tenant.id }).del();
  });

  await t.test('API keys and anonymous callers may not manage 2FA', async (t) => {
    for (const [method, url, body] of [
      ['GET', '/2fa', undefined], ['POST', '/2fa/setup', undefined], ['POST', '/2fa/confirm', { code: '123456' }],
      ['POST', '/2fa/disable', { password: tenant.admin.password }],
    ] as const) {
      const res = await call(env, method, url, { token: tenant.apiKey, body });
      t.equal(res.statusCode, 403, `${method} ${url} with an API key: 403`);
      t.equal(res.json().code, 'forbidden');
      t.equal((await call(env, method, url, { body })).statusCode, 401, `${method} ${url} anonymous: 401`);
    }
    const admin = await env.deps.db('users').where({ tenant_id: tenant.id, id: tenant.admin.id }).first();
    t.equal(admin.two_factor_enabled, false, 'nothing changed');
  });

  await t.test('disable needs the password', async (t) => {
    const bad = await call(env, 'POST', '/2fa/disable', { token, body: { password: 'not my password at all' } });
    t.equal(bad.statusCode, 422);
    t.same(bad.json().details, [{ field: 'password', message: 'is incorrect' }]);
    t.equal((await userRow()).two_factor_enabled, true);

    const off = await call(env, 'POST', '/2fa/disable', { token, body: { password: agent.password } });
    t.equal(off.statusCode, 200);
    t.same(off.json(), { enabled: false });
    t.match(await userRow(), { two_factor_enabled: false, two_factor_secret_enc: null, two_factor_pending_secret_enc: null, two_factor_last_step: null });
    t.equal((await env.deps.db('recovery_codes').where({ tenant_id: tenant.id, user_id: agent.id })).length, 0);
    t.ok(await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'user.two_factor_disabled', resource_id: agent.id }).first());
    const plain = await login();
    t.match(plain.json(), { token: /^hds_/ }, 'sign-in needs no second step any more');
  });
});
