import t from 'tap';
import ICAL from 'ical.js';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { nextMail, smtpSink, waitForMail, type SmtpSink } from '../../helpers/smtp.js';
import { compose, deliver, inboundPath, parse } from '../../helpers/mail.js';
import { openTicket, count } from '../../helpers/tickets.js';
import { calendarPartOf, parseCalendar } from '../../helpers/ical.js';

/** Meetings (SPEC "Meeting", CONTRACT §4, §7): CRUD, invitations, RSVPs, recurrence, availability, feeds. */
t.setTimeout(180_000);

const ruleParts = (rule: string | null) => (rule ?? '').split(';').sort();
const UID = (id: string) => `${id}@meetings.helpdesk.invalid`;

async function invitationsFor(sink: SmtpSink, n: number) {
  const out = [];
  // Ticket notifications (the customer's confirmation) may arrive in between: skip them.
  while (out.length < n) {
    const mail = await nextMail(sink);
    const parsed = await parse(mail);
    if (!parsed.attachments.some((a) => a.contentType === 'text/calendar')) continue;
    const part = calendarPartOf(parsed);
    out.push({ to: mail.to[0]!, subject: parsed.subject ?? '', contentType: JSON.stringify(parsed.attachments.map((a) => a.contentType)), cal: parseCalendar(part.text) });
  }
  return out.sort((a, b) => a.to.localeCompare(b.to));
}

const timeline = async (env: TestEnv, token: string, ticketId: string) =>
  (await call(env, 'GET', `/tickets/${ticketId}/events`, { token, query: { page_size: '100' } })).json().data as Array<{ type: string; data: Record<string, unknown> }>;

t.test('meetings', async (t) => {
  const sink = await smtpSink(t);
  const keys = licenseKeys();
  const env = await testApp(t, { smtpUrl: sink.url, mailFrom: 'Helpdesk <support@helpdesk.example>', licensePublicKey: keys.publicKeyPem });
  const tenant = await tenantFixture(env);
  const admin = tenant.admin.token;
  await grantLicense(env, tenant.id, keys);
  const agent = await userFixture(env, tenant.id, 'agent', 'agent@helpdesk.example');
  t.equal((await call(env, 'PATCH', `/users/${agent.id}`, { token: admin, body: { timezone: 'Europe/Berlin' } })).statusCode, 200);
  const colleague = await userFixture(env, tenant.id, 'agent', 'colleague@helpdesk.example');
  const customer = await userFixture(env, tenant.id, 'customer', 'cust@customer.example');
  const outsider = await userFixture(env, tenant.id, 'customer', 'other@customer.example');
  const ticket = await openTicket(env, admin, { requester_id: customer.id });

  let meetingId = '';

  await t.test('create with the alternative spellings; canonical output, invitations, note, audit', async (t) => {
    const res = await call(env, 'POST', '/meetings', {
      token: agent.token,
      body: {
        title: 'Export walkthrough', description: 'Screen share', starts_at: '2026-12-01T10:00:00+01:00', ends_at: '2026-12-01T10:30:00+01:00',
        provider: 'manual', join_url: 'https://meet.example.com/abc', ticket_id: ticket.id,
        attendees: [{ user_id: colleague.id }, { name: 'Guest Person', email: 'Guest@Customer.example' }, { user_id: customer.id }],
      },
    });
    t.equal(res.statusCode, 201, res.body);
    const m = res.json();
    meetingId = m.id;
    t.match(m, {
      title: 'Export walkthrough', start_at: '2026-12-01T09:00:00.000Z', end_at: '2026-12-01T09:30:00.000Z', video_provider: 'manual',
      join_url: 'https://meet.example.com/abc', ticket_id: ticket.id, organizer_id: agent.id, recurrence_rule: null, invite_sequence: 0,
      status: 'active', cancel_reason: null, ical_uid: UID(m.id), timezone: 'Europe/Berlin',
    });
    t.notOk('starts_at' in m || 'provider' in m, 'only canonical names out');
    t.same(m.attendees.map((a: { email: string; response: string; user_id: string | null; name: string | null }) => [a.email, a.user_id, a.name, a.response]), [
      ['colleague@helpdesk.example', colleague.id, m.attendees[0].name, 'needs_action'],
      ['guest@customer.example', null, 'Guest Person', 'needs_action'],
      ['cust@customer.example', customer.id, m.attendees[2].name, 'needs_action'],
    ]);
    const mails = await invitationsFor(sink, 3);
    t.same(mails.map((x) => x.to), ['colleague@helpdesk.example', 'cust@customer.example', 'guest@customer.example']);
    for (const mail of mails) {
      t.equal(mail.cal.method, 'REQUEST');
      const [event] = mail.cal.events;
      t.equal(event!.uid, UID(m.id));
      t.equal(event!.sequence, 0);
      t.equal(event!.summary, 'Export walkthrough');
      t.equal(event!.tzid, 'Europe/Berlin');
      t.equal(event!.start.toJSDate().toISOString(), '2026-12-01T09:00:00.000Z');
      t.equal(event!.start.hour, 10, '10:00 local');
      t.equal(event!.attendees.length, 3);
      t.equal(event!.organizer, 'support@helpdesk.example', 'replies come back to the tenant');
      t.match(mail.subject, /^Invitation: Export walkthrough/);
    }
    const notes = (await timeline(env, admin, ticket.id)).filter((e) => e.type.startsWith('meeting_'));
    t.same(notes.map((e) => e.type), ['meeting_scheduled']);
    t.equal(notes[0]!.data.meeting_id, m.id);
    const audit = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'meeting.created', resource_id: m.id });
    t.equal(audit.length, 1);
    const got = await call(env, 'GET', `/api/v1/meetings/${m.id}`, { token: admin });
    t.same(got.json(), m);
  });

  await t.test('bad input is 422 with field details and writes nothing', async (t) => {
    const before = { meetings: await count(env, 'meetings', tenant.id), mails: await count(env, 'notifications', tenant.id), audit: await count(env, 'audit_log', tenant.id) };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T10:00:00Z' }, 'title'],
      [{ title: 'x', end_at: '2026-12-01T10:00:00Z' }, 'start_at'],
      [{ title: 'x', start_at: '2026-12-01T10:00:00Z', end_at: '2026-12-01T09:00:00Z' }, 'end_at'],
      [{ title: 'x', start_at: '2026-12-01T09:00:00Z', starts_at: '2026-12-01T08:00:00Z', end_at: '2026-12-01T10:00:00Z' }, 'starts_at'],
      [{ title: 'x', start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T10:00:00Z', recurrence_rule: 'FREQ=HOURLY' }, 'recurrence_rule'],
      [{ title: 'x', start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T10:00:00Z', recurrence_rule: 'FREQ=DAILY;BYDAY=MO' }, 'recurrence_rule'],
      [{ title: 'x', start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T10:00:00Z', recurrence_rule: 'FREQ=WEEKLY;BYDAY=SA' }, 'recurrence_rule'],
      [{ title: 'x', start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T10:00:00Z', recurrence_rule: 'FREQ=MONTHLY;BYMONTHDAY=1' }, 'recurrence_rule'],
      [{ title: 'x', start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T10:00:00Z', recurrence_rule: 'FREQ=DAILY;COUNT=3;UNTIL=20261210T000000Z' }, 'recurrence_rule'],
      [{ title: 'x', start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T10:00:00Z', recurrence_rule: 'FREQ=DAILY;UNTIL=2026-12-10' }, 'recurrence_rule'],
      [{ title: 'x', start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T10:00:00Z', attendees: [{ email: 'a@b.example' }, { user_id: outsider.id }] }, 'attendees.1.user_id'],
      [{ title: 'x', start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T10:00:00Z', timezone: 'Mars/Olympus' }, 'timezone'],
      [{ title: 'x', start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T10:00:00Z', ticket_id: '0190f3a0-0000-7000-8000-000000000000' }, 'ticket_id'],
      [{ title: 'x', start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T10:00:00Z', video_provider: 'zoom' }, 'video_provider'],
      [{ title: 'x', start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T10:00:00Z', attendees: [{ email: 'not-an-email' }] }, 'attendees'],
    ];
    for (const [body, field] of cases) {
      const res = await call(env, 'POST', '/meetings', { token: agent.token, body });
      t.equal(res.statusCode, 422, `${JSON.stringify(body)} → 422`);
      t.equal(res.json().code, 'validation_failed');
      t.ok(res.json().details.some((d: { field: string }) => d.field.startsWith(field)), `${field} named: ${JSON.stringify(res.json().details)}`);
    }
    t.same({ meetings: await count(env, 'meetings', tenant.id), mails: await count(env, 'notifications', tenant.id), audit: await count(env, 'audit_log', tenant.id) }, before);
  });

  await t.test('PATCH changes only what is sent; PUT assigns everything; removed attendees get CANCEL', async (t) => {
    const patched = await call(env, 'PATCH', `/api/v1/meetings/${meetingId}`, { token: agent.token, body: { title: 'Export walkthrough (v2)' } });
    t.equal(patched.statusCode, 200, patched.body);
    t.match(patched.json(), { title: 'Export walkthrough (v2)', description: 'Screen share', join_url: 'https://meet.example.com/abc', invite_sequence: 1, ticket_id: ticket.id });
    t.equal(patched.json().attendees.length, 3);
    const requests = await invitationsFor(sink, 3);
    t.ok(requests.every((r) => r.cal.method === 'REQUEST' && r.cal.events[0]!.sequence === 1 && r.cal.events[0]!.uid === UID(meetingId)));

    const put = await call(env, 'PUT', `/api/v1/meetings/${meetingId}`, {
      token: agent.token,
      body: { title: 'Export walkthrough', start_at: '2026-12-02T09:00:00Z', end_at: '2026-12-02T10:00:00Z', ticket_id: ticket.id, attendees: [{ email: 'guest@customer.example' }] },
    });
    t.equal(put.statusCode, 200, put.body);
    t.match(put.json(), { description: null, join_url: null, video_provider: 'manual', recurrence_rule: null, invite_sequence: 2 });
    t.same(put.json().attendees.map((a: { email: string }) => a.email), ['guest@customer.example']);
    const mails = await invitationsFor(sink, 3);
    const byTo = Object.fromEntries(mails.map((m) => [m.to, m]));
    t.equal(byTo['guest@customer.example']!.cal.method, 'REQUEST');
    t.equal(byTo['guest@customer.example']!.cal.events[0]!.sequence, 2);
    for (const removed of ['colleague@helpdesk.example', 'cust@customer.example']) {
      t.equal(byTo[removed]!.cal.method, 'CANCEL', `${removed} gets CANCEL`);
      t.equal(byTo[removed]!.cal.events[0]!.uid, UID(meetingId));
      t.equal(byTo[removed]!.cal.events[0]!.status, 'CANCELLED');
      t.equal(byTo[removed]!.cal.events[0]!.sequence, 2);
    }
    const types = (await timeline(env, admin, ticket.id)).filter((e) => e.type.startsWith('meeting_')).map((e) => e.type);
    t.same(types, ['meeting_scheduled', 'meeting_updated', 'meeting_updated']);
  });

  await t.test('an RSVP reply by mail updates the attendee, notes it, and opens no ticket', async (t) => {
    const path = await inboundPath(env, admin);
    const tickets = await count(env, 'tickets', tenant.id);
    const reply = [
      'BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Mail client//EN', 'METHOD:REPLY', 'BEGIN:VEVENT', `UID:${UID(meetingId)}`, 'SEQUENCE:2',
      'DTSTAMP:20261127T120000Z', 'ATTENDEE;PARTSTAT=ACCEPTED;CN="Guest Person":mailto:guest@customer.example', 'END:VEVENT', 'END:VCALENDAR', '',
    ].join('\r\n');
    const raw = await compose({ from: 'guest@customer.example', to: 'support@helpdesk.example', subject: 'Accepted: Export walkthrough', text: 'Accepted', icalEvent: { method: 'REPLY', content: reply } });
    const res = await deliver(env, path, raw);
    t.equal(res.statusCode, 202, res.body);
    t.equal(await count(env, 'tickets', tenant.id), tickets, 'no ticket');
    const m = (await call(env, 'GET', `/api/v1/meetings/${meetingId}`, { token: admin })).json();
    t.equal(m.attendees[0].response, 'accepted');
    const notes = (await timeline(env, admin, ticket.id)).filter((e) => e.type === 'meeting_rsvp');
    t.equal(notes.length, 1);
    t.match(notes[0]!.data, { meeting_id: meetingId, attendee_email: 'guest@customer.example', response: 'accepted' });
  });

  await t.test('another tenant sees none of it', async (t) => {
    const other = await tenantFixture(env);
    await grantLicense(env, other.id, keys);
    t.equal((await call(env, 'GET', `/api/v1/meetings/${meetingId}`, { token: other.admin.token })).statusCode, 404);
    t.equal((await call(env, 'PATCH', `/api/v1/meetings/${meetingId}`, { token: other.admin.token, body: { title: 'x' } })).statusCode, 404);
    t.equal((await call(env, 'POST', `/api/v1/meetings/${meetingId}/cancel`, { token: other.admin.token, body: {} })).statusCode, 404);
    t.equal((await call(env, 'DELETE', `/api/v1/meetings/${meetingId}`, { token: other.admin.token })).statusCode, 404);
    t.equal((await call(env, 'GET', '/meetings', { token: other.admin.token })).json().meta.total, 0);
    const linked = await call(env, 'POST', '/meetings', { token: other.admin.token, body: { title: 'x', start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T10:00:00Z', ticket_id: ticket.id } });
    t.equal(linked.statusCode, 422, 'a ticket of another tenant is unknown');
  });

  await t.test('without the meetings module the routes answer 403 feature_not_licensed', async (t) => {
    const bare = await tenantFixture(env);
    const res = await call(env, 'GET', '/meetings', { token: bare.admin.token });
    t.equal(res.statusCode, 403);
    t.match(res.json(), { code: 'feature_not_licensed', details: { feature: 'meetings' } });
  });

  await t.test('customers have no meetings scope', async (t) => {
    t.equal((await call(env, 'GET', '/meetings', { token: customer.token })).statusCode, 403);
  });

  await t.test('cancel: CANCEL to everyone, a note, and 409 meeting_cancelled on later edits', async (t) => {
    const res = await call(env, 'POST', `/api/v1/meetings/${meetingId}/cancel`, { token: agent.token, body: { reason: 'Solved by mail' } });
    t.equal(res.statusCode, 200, res.body);
    t.match(res.json(), { status: 'cancelled', cancel_reason: 'Solved by mail', invite_sequence: 3 });
    const [mail] = await invitationsFor(sink, 1);
    t.equal(mail!.cal.method, 'CANCEL');
    t.equal(mail!.cal.events[0]!.sequence, 3);
    for (const [method, url, body] of [['PATCH', `/api/v1/meetings/${meetingId}`, { title: 'again' }], ['PUT', `/api/v1/meetings/${meetingId}`, { title: 'a', start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T10:00:00Z' }], ['POST', `/api/v1/meetings/${meetingId}/cancel`, {}]] as const) {
      const again = await call(env, method, url, { token: agent.token, body });
      t.equal(again.statusCode, 409, `${method} ${url}`);
      t.equal(again.json().code, 'meeting_cancelled');
    }
    const types = (await timeline(env, admin, ticket.id)).filter((e) => e.type.startsWith('meeting_')).map((e) => e.type);
    t.equal(types[types.length - 1], 'meeting_cancelled');
    t.equal((await call(env, 'DELETE', `/api/v1/meetings/${meetingId}`, { token: admin })).statusCode, 204);
    t.equal((await call(env, 'GET', `/api/v1/meetings/${meetingId}`, { token: admin })).statusCode, 404);
  });

  await t.test('a weekly series across the spring DST change: availability, invitations and the feed agree on 09:00 local', async (t) => {
    const res = await call(env, 'POST', '/meetings', {
      token: agent.token,
      body: { title: 'Weekly sync', start_at: '2027-03-15T08:00:00Z', end_at: '2027-03-15T08:30:00Z', recurrence_rule: 'RRULE:freq=weekly;byday=MO;count=4', attendees: [{ user_id: colleague.id }] },
    });
    t.equal(res.statusCode, 201, res.body);
    const series = res.json();
    t.equal(series.recurrence_rule, 'FREQ=WEEKLY;BYDAY=MO;COUNT=4', 'stored in canonical form');
    t.equal(await count(env, 'meetings', tenant.id), 1, 'one row for the whole series');
    const [invite] = await invitationsFor(sink, 1);
    t.same(ruleParts(invite!.cal.events[0]!.rrule), ['BYDAY=MO', 'COUNT=4', 'FREQ=WEEKLY']);

    const busy = await call(env, 'GET', '/api/v1/meetings/availability', {
      token: agent.token, query: { from: '2027-03-01T00:00:00Z', to: '2027-05-01T00:00:00Z', attendee_ids: `${agent.id},${colleague.id},${customer.id}` },
    });
    t.equal(busy.statusCode, 200, busy.body);
    const conflicts = busy.json().conflicts;
    t.same(conflicts.map((c: { user_id: string }) => c.user_id), [agent.id, colleague.id], 'organizer and attendee are busy; the customer is free');
    t.same(conflicts[0].busy_ranges.map((r: { start_at: string }) => r.start_at), [
      '2027-03-15T08:00:00.000Z', '2027-03-22T08:00:00.000Z', '2027-03-29T07:00:00.000Z', '2027-04-05T07:00:00.000Z',
    ], '09:00 Berlin before and after the change');
    t.ok(conflicts[0].busy_ranges.every((r: { source: string }) => r.source === 'meeting'));
    const excluded = await call(env, 'GET', '/api/v1/meetings/availability', {
      token: agent.token, query: { from: '2027-03-01T00:00:00Z', to: '2027-05-01T00:00:00Z', attendee_ids: agent.id, exclude_meeting_id: series.id },
    });
    t.same(excluded.json().conflicts, []);
    const bad = await call(env, 'GET', '/api/v1/meetings/availability', { token: agent.token, query: { from: '2027-03-02T00:00:00Z', to: '2027-03-01T00:00:00Z', attendee_ids: 'nope' } });
    t.equal(bad.statusCode, 422);

    // The feed: one VEVENT with its RRULE, expanded by ical.js at 09:00 local each week.
    const token = await call(env, 'POST', '/api/v1/meetings/feed-token/regenerate', { token: colleague.token });
    t.equal(token.statusCode, 200, token.body);
    const { feed_token: feedToken, feed_url: feedUrl } = token.json();
    t.match(feedUrl, new RegExp(`/meetings/feed/${feedToken}\\.ics$`));
    const feed = await env.app.inject({ method: 'GET', url: new URL(feedUrl).pathname });
    t.equal(feed.statusCode, 200, feed.body);
    t.match(feed.headers['content-type'], /^text\/calendar/);
    const cal = parseCalendar(feed.body);
    const events = cal.events.filter((e) => e.uid === UID(series.id));
    t.equal(events.length, 1, 'the series is one VEVENT');
    t.same(ruleParts(events[0]!.rrule), ['BYDAY=MO', 'COUNT=4', 'FREQ=WEEKLY']);
    const iterator = new ICAL.Event(events[0]!.component).iterator();
    const starts: string[] = [];
    const hours: number[] = [];
    for (let next = iterator.next(); next; next = iterator.next()) {
      starts.push(next.toJSDate().toISOString());
      hours.push(next.hour);
    }
    t.same(hours, [9, 9, 9, 9], 'same local time every week');
    t.same(starts, ['2027-03-15T08:00:00.000Z', '2027-03-22T08:00:00.000Z', '2027-03-29T07:00:00.000Z', '2027-04-05T07:00:00.000Z']);

    const again = await call(env, 'POST', '/api/v1/meetings/feed-token/regenerate', { token: colleague.token });
    t.equal((await env.app.inject({ method: 'GET', url: new URL(feedUrl).pathname })).statusCode, 404, 'the old address is dead at once');
    t.equal((await env.app.inject({ method: 'GET', url: new URL(again.json().feed_url).pathname })).statusCode, 200);
    t.equal((await env.app.inject({ method: 'GET', url: `/meetings/feed/${again.json().feed_token}` })).statusCode, 200, 'also without .ics');
  });

  await t.test('list filters by ticket', async (t) => {
    const res = await call(env, 'GET', '/meetings', { token: admin, query: { ticket_id: ticket.id } });
    t.equal(res.statusCode, 200);
    t.equal(res.json().meta.total, 0);
    const all = await call(env, 'GET', '/meetings', { token: admin });
    t.equal(all.json().meta.total, 1);
  });
  await waitForMail(sink, sink.messages.length);
});
