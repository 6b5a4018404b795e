import t from 'tap';
import { call, csrfToken, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { smtpSink, waitForMail } from '../../helpers/smtp.js';
import { sha256Hex } from '../../../src/core/crypto.js';
import { uuidv7 } from '../../../src/core/ids.js';

const tokenIn = (raw: string) => /reset token: ([\w-]{43})/.exec(raw)?.[1];

t.test('forgot and reset password, through a real SMTP server', async (t) => {
  const smtp = await smtpSink(t);
  const env = await testApp(t, { smtpUrl: smtp.url, siteUrl: 'https://help.example.com' });
  const tenant = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const csrf = await csrfToken(env, tenant.slug);
  const forgot = (email: string) => call(env, 'POST', '/auth/forgot-password', { tenant: tenant.slug, csrf, body: { email } });
  const reset = (token: string, new_password: string) => call(env, 'POST', '/auth/reset-password', { tenant: tenant.slug, csrf, body: { token, new_password } });
  const login = (password: string) => call(env, 'POST', '/auth/login', { tenant: tenant.slug, csrf, body: { email: agent.email, password } });

  const known = await forgot(agent.email.toUpperCase());
  t.equal(known.statusCode, 202);
  const [mail] = await waitForMail(smtp, 1);
  t.ok(mail, 'a message arrived');
  t.same(mail!.to, [agent.email]);
  t.match(mail!.raw, /Subject: Reset your Helpdesk password/);
  const token = tokenIn(mail!.raw)!;
  t.ok(token, 'the mail carries the token');
  t.match(mail!.raw, `https://help.example.com/reset-password?token=${token}`);
  const row = await env.deps.db('user_tokens').where({ tenant_id: tenant.id, user_id: agent.id }).first();
  t.match(row, { purpose: 'password_reset', token_hash: sha256Hex(token), used_at: null });
  t.ok(Math.abs(row.expires_at.getTime() - row.created_at.getTime() - 3600_000) < 1000, 'valid one hour');

  await t.test('unknown or deactivated addresses: same answer, no mail, nothing stored', async (t) => {
    const inactive = await userFixture(env, tenant.id, 'customer');
    await env.deps.db('users').where({ tenant_id: tenant.id, id: inactive.id }).update({ active: false });
    for (const email of ['nobody@example.com', inactive.email]) {
      const res = await forgot(email);
      t.equal(res.statusCode, known.statusCode);
      t.equal(res.body, known.body);
      t.equal(res.body, '{}');
    }
    await waitForMail(smtp, 2, 300);
    t.equal(smtp.messages.length, 1, 'no further mail');
    t.equal((await env.deps.db('user_tokens').where({ tenant_id: tenant.id })).length, 1);
    const malformed = await call(env, 'POST', '/auth/forgot-password', { tenant: tenant.slug, csrf, body: { email: 'not an email' } });
    t.equal(malformed.statusCode, 422);
    t.same(malformed.json().details, [{ field: 'email', message: 'must be a valid email' }]);
  });

  await t.test('reset: validation, then success once', async (t) => {
    const short = await reset(token, 'short');
    t.equal(short.statusCode, 422);
    t.same(short.json().details, [{ field: 'new_password', message: 'must be at least 12 characters' }]);
    // The schema states the password policy, so a short password is refused before the token is looked up.
    const both = await reset('bogus-token', 'short');
    t.same(both.json().details, [{ field: 'new_password', message: 'must be at least 12 characters' }]);
    const bogus = await reset('bogus-token', 'a long enough passphrase');
    t.same(bogus.json().details, [{ field: 'token', message: 'is invalid or expired' }]);
    const missing = await call(env, 'POST', '/auth/reset-password', { tenant: tenant.slug, csrf, body: {} });
    t.same(missing.json().details, [{ field: 'token', message: 'is required' }, { field: 'new_password', message: 'is required' }]);
    t.equal((await login(agent.password)).statusCode, 200, 'refused resets changed nothing');

    // A second outstanding link, which the successful reset must void.
    await forgot(agent.email);
    const [, secondMail] = await waitForMail(smtp, 2);
    const secondToken = tokenIn(secondMail!.raw)!;

    const ok = await reset(token, 'my brand new passphrase');
    t.equal(ok.statusCode, 204);
    t.equal(ok.body, '');
    t.equal((await call(env, 'GET', '/auth/me', { token: agent.token })).statusCode, 401, 'old sessions are revoked');
    t.equal((await login(agent.password)).statusCode, 401, 'the old password stops working');
    t.equal((await login('my brand new passphrase')).statusCode, 200, 'the new one works');
    const user = await env.deps.db('users').where({ tenant_id: tenant.id, id: agent.id }).first();
    t.ok(user.password_changed_at, 'password_changed_at set');
    t.ok(await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'user.password_reset', resource_id: agent.id }).first());

    const reuse = await reset(token, 'yet another passphrase');
    t.equal(reuse.statusCode, 422);
    t.same(reuse.json().details, [{ field: 'token', message: 'is invalid or expired' }]);
    t.equal((await reset(secondToken, 'yet another passphrase')).statusCode, 422, 'other outstanding links are void');
  });

  await t.test('expired tokens, invitations, and tokens of another tenant', async (t) => {
    const invitee = await userFixture(env, tenant.id, 'agent');
    const insertToken = (purpose: string, raw: string, expiresAt: Date, tenantId = tenant.id, userId = invitee.id) =>
      env.deps.db('user_tokens').insert({
        tenant_id: tenantId, id: uuidv7(), user_id: userId, purpose, token_hash: sha256Hex(raw), created_at: new Date(), expires_at: expiresAt,
      });
    await insertToken('password_reset', 'expired-token', new Date(Date.now() - 1000));
    t.equal((await reset('expired-token', 'an invitee passphrase')).statusCode, 422, 'expired');

    const other = await tenantFixture(env);
    await insertToken('password_reset', 'other-tenant-token', new Date(Date.now() + 3600_000), other.id, other.admin.id);
    t.equal((await reset('other-tenant-token', 'an invitee passphrase')).statusCode, 422, "another tenant's token is unknown here");

    await insertToken('invite', 'invite-token', new Date(Date.now() + 3600_000));
    t.equal((await reset('invite-token', 'an invitee passphrase')).statusCode, 204, 'an invitation sets the first password');
    const signIn = await call(env, 'POST', '/auth/login', { tenant: tenant.slug, csrf, body: { email: invitee.email, password: 'an invitee passphrase' } });
    t.equal(signIn.statusCode, 200);
  });

  t.same(env.guard.violations, [], 'every query was tenant-scoped');
});
