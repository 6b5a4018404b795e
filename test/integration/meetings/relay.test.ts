import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { nextMail, smtpSink } from '../../helpers/smtp.js';
import { parse } from '../../helpers/mail.js';
import { calendarPartOf, parseCalendar } from '../../helpers/ical.js';

/** Invitations go through the tenant's own SMTP relay (its mail settings), with the tenant's address as ORGANIZER. */
t.test('invitations use the tenant relay', async (t) => {
  const relay = await smtpSink(t);
  const keys = licenseKeys();
  // No instance SMTP_URL: only the tenant's relay can carry the mail.
  const env = await testApp(t, { smtpUrl: null, webhooksAllowPrivate: true, licensePublicKey: keys.publicKeyPem });
  const tenant = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  const port = Number(new URL(relay.url).port);
  const saved = await call(env, 'POST', '/mail-settings', { token: tenant.admin.token, body: { smtp: { host: '127.0.0.1', port, security: 'none', from_address: 'desk@tenant.example', from_name: 'Tenant desk' } } });
  t.equal(saved.statusCode, 200, saved.body);
  const agent = await userFixture(env, tenant.id, 'agent');
  const res = await call(env, 'POST', '/meetings', { token: agent.token, body: { title: 'Relay check', start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T09:30:00Z', attendees: [{ email: 'guest@customer.example' }] } });
  t.equal(res.statusCode, 201, res.body);
  const mail = await nextMail(relay);
  t.same(mail.to, ['guest@customer.example']);
  const parsed = await parse(mail);
  t.equal(parsed.from?.value[0]?.address, 'desk@tenant.example');
  const [event] = parseCalendar(calendarPartOf(parsed).text).events;
  t.equal(event!.uid, `${res.json().id}@meetings.helpdesk.invalid`);
  t.equal(event!.organizer, 'desk@tenant.example');
  const row = await env.deps.db('notifications').where({ tenant_id: tenant.id, identifier: 'meeting.invitation' }).first();
  t.equal(row.status, 'sent');
});
