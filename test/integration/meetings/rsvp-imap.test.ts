import t from 'tap';
import { ImapFlow } from 'imapflow';
import { runJob } from '../../../src/jobs/runner.js';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { dovecotMissing, startDovecot } from '../../helpers/dovecot.js';
import { compose } from '../../helpers/mail.js';
import { count, openTicket } from '../../helpers/tickets.js';

/** An RSVP that arrives by IMAP (the mail-fetch job against a real Dovecot) updates the attendee and opens no ticket. */
const skip = dovecotMissing();

t.test('RSVP by IMAP', { skip }, async (t) => {
  const server = await startDovecot(t, { desk: 'desk-pass' });
  const keys = licenseKeys();
  const env = await testApp(t, { webhooksAllowPrivate: true, licensePublicKey: keys.publicKeyPem });
  const tenant = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const ticket = await openTicket(env, tenant.admin.token, { requester_id: customer.id });
  const settings = await call(env, 'POST', '/mail-settings', { token: tenant.admin.token, body: { imap: { host: server.host, port: server.port, security: 'none', username: 'desk', password: 'desk-pass' } } });
  t.equal(settings.statusCode, 200, settings.body);
  const meeting = (await call(env, 'POST', '/meetings', { token: agent.token, body: {
    title: 'IMAP sync', start_at: '2026-12-05T09:00:00Z', end_at: '2026-12-05T09:30:00Z', ticket_id: ticket.id, attendees: [{ email: 'guest@customer.example' }],
  } })).json();
  const reply = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Client//EN', 'METHOD:REPLY', 'BEGIN:VEVENT', `UID:${meeting.ical_uid}`, 'SEQUENCE:0',
    'DTSTAMP:20261127T120000Z', 'ATTENDEE;PARTSTAT=DECLINED:mailto:guest@customer.example', 'END:VEVENT', 'END:VCALENDAR', ''].join('\r\n');
  const client = new ImapFlow({ host: server.host, port: server.port, secure: false, doSTARTTLS: false, auth: { user: 'desk', pass: 'desk-pass' }, logger: false });
  await client.connect();
  await client.append('INBOX', await compose({ from: 'guest@customer.example', subject: 'Declined: IMAP sync', text: 'No', icalEvent: { method: 'REPLY', content: reply } }));
  await client.logout();
  const tickets = await count(env, 'tickets', tenant.id);
  const run = await runJob(env.deps, 'mail-fetch', { now: new Date(Date.now() + 61_000) });
  t.match(run, { status: 'succeeded' });
  t.equal(await count(env, 'tickets', tenant.id), tickets, 'no ticket');
  const after = (await call(env, 'GET', `/api/v1/meetings/${meeting.id}`, { token: agent.token })).json();
  t.equal(after.attendees[0].response, 'declined');
  const notes = (await call(env, 'GET', `/tickets/${ticket.id}/events`, { token: tenant.admin.token })).json().data.filter((e: { type: string }) => e.type === 'meeting_rsvp');
  t.equal(notes.length, 1);
});
