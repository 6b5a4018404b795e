import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { smtpSink, waitForMail } from '../../helpers/smtp.js';
import { parse } from '../../helpers/mail.js';
import { openTicket } from '../../helpers/tickets.js';

/** Notification templates (list, edit, reset, escaping) and mail settings (secrets, hosts, tests). */

const IDENTIFIERS = ['ticket.created.customer', 'ticket.created.agent', 'ticket.assigned', 'ticket.reply.customer', 'ticket.reply.agent', 'ticket.resolved', 'sla.warning'];

t.test('notification templates', async (t) => {
  const sink = await smtpSink(t);
  const env = await testApp(t, { smtpUrl: sink.url });
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent');

  await t.test('the seven shipped templates, with a German translation each', async (t) => {
    const res = await call(env, 'GET', '/notification-templates', { token: admin });
    t.equal(res.statusCode, 200);
    const list = res.json().data;
    t.same(list.map((x: { identifier: string }) => x.identifier), IDENTIFIERS);
    for (const template of list) {
      t.ok(template.subject && template.body_html);
      t.ok(template.translations.de?.subject, `${template.identifier} has German`);
      t.equal(template.customized, false);
    }
    t.equal((await call(env, 'GET', '/notification-templates', { token: agent.token })).statusCode, 403, 'admins only');
  });

  await t.test('edits: default and translation, unknown placeholders named, unknown identifier 404, audit', async (t) => {
    let res = await call(env, 'PATCH', '/notification-templates/ticket.created.customer', { token: admin, body: { subject: 'Got it: {{ticket.subject}} ({{ticket.number}})', body_html: '<p>Hi {{customer.name}}</p><p>{{message.body}}</p>' } });
    t.equal(res.statusCode, 200, res.body);
    t.match(res.json(), { identifier: 'ticket.created.customer', subject: 'Got it: {{ticket.subject}} ({{ticket.number}})', customized: true });
    res = await call(env, 'PATCH', '/notification-templates/ticket.created.customer', { token: admin, body: { subject: 'Erhalten: {{ticket.subject}}', locale: 'de' } });
    t.equal(res.json().translations.de.subject, 'Erhalten: {{ticket.subject}}');
    t.match(res.json().translations.de.body_html, /Hallo/, 'the body of the translation is kept');
    res = await call(env, 'PATCH', '/notification-templates/ticket.created.customer', { token: admin, body: { body_html: '{{ticket.secret}} {{ constructor.constructor }} {{ticket.subject}}' } });
    t.equal(res.statusCode, 422);
    t.same(res.json().details, [{ field: 'body_html', message: 'uses unknown placeholders {{ticket.secret}}, {{constructor.constructor}}' }]);
    res = await call(env, 'PATCH', '/notification-templates/ticket.nope', { token: admin, body: { subject: 'x' } });
    t.equal(res.statusCode, 404);
    res = await call(env, 'PATCH', '/notification-templates/ticket.resolved', { token: admin, body: { locale: 'not a locale', subject: 'x' } });
    t.equal(res.statusCode, 422);
    t.equal(res.json().details[0].field, 'locale');
    t.equal((await call(env, 'GET', '/notification-templates', { token: other.admin.token })).json().data[0].customized, false, 'another tenant keeps the shipped text');
    const audit = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'notification_template.updated' });
    t.equal(audit.length, 2);
  });

  await t.test('rendering: values escaped in the HTML, the subject a single line', async (t) => {
    const customer = await userFixture(env, tenant.id, 'customer');
    t.equal((await call(env, 'PATCH', `/users/${customer.id}`, { token: admin, body: { name: '<img src=x onerror=alert(1)>' } })).statusCode, 200);
    const before = sink.messages.length;
    const ticket = await openTicket(env, customer.token, { subject: 'Break <script>', body: '<b>bold?</b>\nline two' });
    await waitForMail(sink, before + 1);
    const parsed = await parse(sink.messages.slice(before).find((m) => m.to.includes(customer.email))!);
    t.equal(parsed.subject, `[#${ticket.ticket_number}] Got it: Break <script> (${ticket.ticket_number})`);
    t.match(parsed.html as string, /Hi &lt;img src=x onerror=alert\(1\)&gt;/);
    t.match(parsed.html as string, /&lt;b&gt;bold\?&lt;\/b&gt;<br>line two/);
    t.notMatch(parsed.html as string, /<img src=x/);
  });

  await t.test('DELETE restores the shipped texts in every locale', async (t) => {
    t.equal((await call(env, 'DELETE', '/notification-templates/ticket.created.customer', { token: admin })).statusCode, 204);
    const template = (await call(env, 'GET', '/notification-templates', { token: admin })).json().data[0];
    t.match(template, { customized: false, subject: 'We received your request: {{ticket.subject}}' });
    t.match(template.translations.de.subject, /Wir haben/);
    t.equal((await call(env, 'DELETE', '/notification-templates/nope', { token: admin })).statusCode, 404);
  });
});

t.test('mail settings', async (t) => {
  const sink = await smtpSink(t, { users: { desk: 'smtp-secret' } });
  const env = await testApp(t, { webhooksAllowPrivate: true });
  const strict = await testApp(t, { webhooksAllowPrivate: false });
  const tenant = await tenantFixture(env);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent');
  const [host, port] = sink.url.replace('smtp://', '').split(':');

  await t.test('defaults, passwords encrypted and masked, the masked value keeps the secret', async (t) => {
    let res = await call(env, 'GET', '/mail-settings', { token: admin });
    t.equal(res.statusCode, 200);
    t.match(res.json(), { smtp: null, imap: null, inbound_url: /\/api\/v1\/integrations\/email\/inbound\/mi_[0-9a-f]{32}\.[\w-]{43}$/ });
    res = await call(env, 'POST', '/mail-settings', { token: admin, body: {
      smtp: { host, port: Number(port), security: 'none', username: 'desk', password: 'smtp-secret', from_address: 'Desk@Example.com', from_name: 'Desk' },
      imap: { host: '127.0.0.1', port: 1143, security: 'none', username: 'desk', password: 'imap-secret' },
    } });
    t.equal(res.statusCode, 200, res.body);
    t.match(res.json(), {
      smtp: { host, username: 'desk', password: '********', from_address: 'desk@example.com' },
      imap: { password: '********', mailbox: 'INBOX', poll_interval_seconds: 60, delete_after_import: false, last_polled_at: null },
    });
    const row = await env.deps.db('mail_settings').where({ tenant_id: tenant.id }).first();
    t.notMatch(JSON.stringify(row), /smtp-secret|imap-secret/, 'no password stored in the clear');
    t.equal(env.deps.box.decrypt(row.smtp_password_enc), 'smtp-secret');
    res = await call(env, 'POST', '/mail-settings', { token: admin, body: { imap: { host: '127.0.0.1', port: 1143, security: 'none', username: 'desk', password: '********', poll_interval_seconds: 30 } } });
    t.equal(res.statusCode, 200);
    const after = await env.deps.db('mail_settings').where({ tenant_id: tenant.id }).first();
    t.equal(env.deps.box.decrypt(after.imap_password_enc), 'imap-secret', '"********" keeps the stored password');
    t.equal(after.poll_interval_seconds, 30);
    t.ok(after.smtp_host, 'the part not sent is unchanged');
    const audit = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'mail_settings.updated' });
    t.equal(audit.length, 2);
    t.notMatch(JSON.stringify(audit), /secret/, 'the audit holds no password');
    t.equal((await call(env, 'GET', '/mail-settings', { token: agent.token })).statusCode, 403);
  });

  await t.test('bad input: masked password with nothing stored, bad hosts, private hosts when not allowed', async (t) => {
    const fresh = await tenantFixture(env);
    let res = await call(env, 'POST', '/mail-settings', { token: fresh.admin.token, body: { imap: { host: 'imap.example.com', port: 993, security: 'tls', username: 'u', password: '********' } } });
    t.equal(res.statusCode, 422);
    t.same(res.json().details, [{ field: 'imap.password', message: 'has no stored password to keep; send the password' }]);
    res = await call(env, 'POST', '/mail-settings', { token: fresh.admin.token, body: { smtp: { host: 'bad host!', port: 25, security: 'none', from_address: 'a@b.example' } } });
    t.equal(res.statusCode, 422);
    t.equal(res.json().details[0].field, 'smtp.host');
    res = await call(env, 'POST', '/mail-settings', { token: fresh.admin.token, body: { smtp: { host: 'x.example', port: 70000, security: 'ssl', from_address: 'nope' } } });
    t.equal(res.statusCode, 422);
    const strictTenant = await tenantFixture(strict);
    for (const privateHost of ['127.0.0.1', 'localhost', '10.1.2.3', '169.254.169.254', '::1', '192.168.0.1']) {
      res = await call(strict, 'POST', '/mail-settings', { token: strictTenant.admin.token, body: { smtp: { host: privateHost, port: 25, security: 'none', from_address: 'a@b.example' } } });
      t.equal(res.statusCode, 422, privateHost);
      t.equal(res.json().details[0].field, 'smtp.host');
    }
    t.equal(await strict.deps.db('mail_settings').count({ n: '*' }).then((r) => Number(r[0]!.n)), 0, 'nothing half-written');
  });

  await t.test('test-smtp logs in and sends; a dead server is ok: false; test-imap without IMAP says so', async (t) => {
    let res = await call(env, 'POST', '/mail-settings/test-smtp', { token: admin, body: {} });
    t.same(res.json(), { ok: true });
    const before = sink.messages.length;
    res = await call(env, 'POST', '/mail-settings/test-smtp', { token: admin, body: { to: 'me@example.com' } });
    t.same(res.json(), { ok: true });
    await waitForMail(sink, before + 1);
    t.same(sink.messages[before]!.to, ['me@example.com']);
    t.match(sink.messages[before]!.raw, /From: Desk <desk@example.com>/);
    await call(env, 'POST', '/mail-settings', { token: admin, body: { smtp: { host, port: Number(port), security: 'none', username: 'desk', password: 'wrong', from_address: 'desk@example.com' } } });
    res = await call(env, 'POST', '/mail-settings/test-smtp', { token: admin, body: {} });
    t.equal(res.json().ok, false, 'a wrong password fails the login');
    t.match(res.json().error, /Invalid login/);
    await call(env, 'POST', '/mail-settings', { token: admin, body: { smtp: { host: '127.0.0.1', port: 9, security: 'none', from_address: 'desk@example.com' } } });
    res = await call(env, 'POST', '/mail-settings/test-smtp', { token: admin, body: {} });
    t.equal(res.json().ok, false);
    t.match(res.json().error, /ECONNREFUSED|connect/i);
    const fresh = await tenantFixture(env);
    t.same((await call(env, 'POST', '/mail-settings/test-imap', { token: fresh.admin.token })).json(), { ok: false, error: 'No IMAP server is configured' });
    t.same((await call(env, 'POST', '/mail-settings/test-smtp', { token: fresh.admin.token, body: {} })).json(), { ok: false, error: 'No SMTP server is configured for this tenant or the instance (SMTP_URL)' });
  });
});
