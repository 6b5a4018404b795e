import t from 'tap';
import { call, csrfToken, testApp, tenantFixture } from '../../helpers/app.js';
import { smtpSink, waitForMail } from '../../helpers/smtp.js';

// The whole staff onboarding path across areas: an admin creates an agent and invites them, the
// invitee sets a first password from the mailed link, logs in, and the link cannot be used again.
t.test('an invited agent sets a password from the mail and signs in', async (t) => {
  const sink = await smtpSink(t);
  const env = await testApp(t, { smtpUrl: sink.url, siteUrl: 'https://help.example.com' });
  const tenant = await tenantFixture(env);

  const created = await call(env, 'POST', '/users', { token: tenant.admin.token, body: { email: 'new.agent@example.com', name: 'New Agent', role: 'agent' } });
  t.equal(created.statusCode, 201);
  const agentId = created.json().id;

  const invited = await call(env, 'POST', `/users/${agentId}/invite`, { token: tenant.admin.token });
  t.equal(invited.statusCode, 202);
  const [mail] = await waitForMail(sink, 1);
  t.ok(mail, 'the invitation arrived over SMTP');
  const token = /accept-invite\?token=([A-Za-z0-9_-]+)/.exec(mail!.raw)?.[1];
  t.ok(token, 'the mail carries the link');

  const csrf = await csrfToken(env, tenant.slug);
  const noPasswordYet = await call(env, 'POST', '/auth/login', { tenant: tenant.slug, csrf, body: { email: 'new.agent@example.com', password: 'whatever password' } });
  t.equal(noPasswordYet.statusCode, 401, 'an invitee without a password cannot sign in');

  const accepted = await call(env, 'POST', '/auth/reset-password', { tenant: tenant.slug, csrf, body: { token, new_password: 'my first real password' } });
  t.equal(accepted.statusCode, 204);

  const login = await call(env, 'POST', '/auth/login', { tenant: tenant.slug, csrf, body: { email: 'new.agent@example.com', password: 'my first real password' } });
  t.equal(login.statusCode, 200);
  t.same(login.json().user, { id: agentId, email: 'new.agent@example.com', name: 'New Agent', role: 'agent' });
  const me = await call(env, 'GET', '/auth/me', { token: login.json().token });
  t.equal(me.json().role, 'agent');

  const reused = await call(env, 'POST', '/auth/reset-password', { tenant: tenant.slug, csrf, body: { token, new_password: 'an attacker password' } });
  t.equal(reused.statusCode, 422, 'the link works once');
  t.same(env.guard.violations, []);
});
