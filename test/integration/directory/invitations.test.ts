import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { sha256Hex } from '../../../src/core/crypto.js';
import { nextMail, smtpSink } from '../../helpers/smtp.js';

// Invitation mail goes through the production mailer to a real SMTP receiver on loopback.
t.test('POST /users/:id/invite', async (t) => {
  const inbox = await smtpSink(t);
  const env = await testApp(t, { smtpUrl: inbox.url, siteUrl: 'https://help.example.com' });
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const created = await call(env, 'POST', '/users', { token: tenant.admin.token, body: { email: 'invitee@example.com', name: 'Ivy Invitee', role: 'agent' } });
  const invitee = created.json();

  await t.test('creates a 7-day invite token, stamps invited_at and mails the link', async (t) => {
    const res = await call(env, 'POST', `/users/${invitee.id}/invite`, { token: tenant.admin.token });
    t.equal(res.statusCode, 202);
    const body = res.json();
    t.same(Object.keys(body).sort(), ['expires_at', 'invited_at', 'user_id']);
    t.equal(body.user_id, invitee.id);
    t.equal(new Date(body.expires_at).getTime() - new Date(body.invited_at).getTime(), 7 * 24 * 3600 * 1000);
    const user = await env.deps.db('users').where({ tenant_id: tenant.id, id: invitee.id }).first();
    t.equal(user.invited_at.toISOString(), body.invited_at);

    const mail = (await nextMail(inbox)).raw;
    t.match(mail, /To: invitee@example\.com/);
    t.match(mail, new RegExp(`Subject: You are invited to Tenant ${tenant.slug}`));
    const token = /https:\/\/help\.example\.com\/accept-invite\?token=([A-Za-z0-9_-]+)/.exec(mail)?.[1];
    t.ok(token, 'the mail carries the link');
    const rows = await env.deps.db('user_tokens').where({ tenant_id: tenant.id, user_id: invitee.id, purpose: 'invite' });
    t.equal(rows.length, 1);
    t.equal(rows[0].token_hash, sha256Hex(token!), 'only the hash is stored');
    t.equal(rows[0].used_at, null);
    const [audit] = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'user.invited', resource_id: invitee.id });
    t.match(audit.changes, { email: 'invitee@example.com', expires_at: body.expires_at });
  });

  await t.test('resending voids the earlier link', async (t) => {
    const res = await call(env, 'POST', `/users/${invitee.id}/invite`, { token: tenant.admin.token });
    t.equal(res.statusCode, 202);
    await nextMail(inbox);
    const rows = await env.deps.db('user_tokens').where({ tenant_id: tenant.id, user_id: invitee.id, purpose: 'invite' }).orderBy('created_at').orderBy('id');
    t.equal(rows.length, 2);
    t.equal(rows.filter((r) => r.used_at === null).length, 1, 'one live token');
    t.equal(rows.find((r) => r.used_at === null).id, rows.sort((a, b) => (a.id < b.id ? -1 : 1))[1].id, 'the newest');
  });

  await t.test('refusals', async (t) => {
    const deactivated = await call(env, 'PATCH', `/users/${agent.id}`, { token: tenant.admin.token, body: { active: false } });
    t.equal(deactivated.statusCode, 200);
    const refused = await call(env, 'POST', `/users/${agent.id}/invite`, { token: tenant.admin.token });
    t.equal(refused.statusCode, 409);
    t.equal(refused.json().code, 'conflict');
    t.equal((await env.deps.db('user_tokens').where({ tenant_id: tenant.id, user_id: agent.id })).length, 0, 'nothing written');
    t.equal((await call(env, 'POST', `/users/${invitee.id}/invite`, { token: other.admin.token })).statusCode, 404, "another tenant's user");
    t.equal((await call(env, 'POST', '/users/nope/invite', { token: tenant.admin.token })).statusCode, 404);
    t.equal((await call(env, 'POST', `/users/${invitee.id}/invite`)).statusCode, 401);
    const customer = await userFixture(env, tenant.id, 'customer');
    t.equal((await call(env, 'POST', `/users/${invitee.id}/invite`, { token: customer.token })).statusCode, 403);
    t.equal(inbox.messages.length, inbox.consumed, 'no mail for refused invitations');
  });
});
