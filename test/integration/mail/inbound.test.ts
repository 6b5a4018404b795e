import t from 'tap';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { smtpSink, waitForMail } from '../../helpers/smtp.js';
import { compose, deliver, inboundPath, parse } from '../../helpers/mail.js';
import { vocab } from '../../helpers/tickets.js';
import { SENDER_LIMIT_PER_HOUR } from '../../../src/mail/inbound.js';

/** Inbound mail (CONTRACT §7, §14) through POST /integrations/email/inbound/{token}. */

// The 25 MB message takes its time to build, parse and store.
t.setTimeout(240_000);

const MARKER = '##- Reply above this line -##';
const count = async (env: TestEnv, table: string, tenantId: string) =>
  Number((await env.deps.db(table).where({ tenant_id: tenantId }).count({ n: '*' }))[0]!.n);
const messagesOf = (env: TestEnv, tenantId: string, ticketId: string) =>
  env.deps.db('messages').where({ tenant_id: tenantId, ticket_id: ticketId }).orderBy('created_at').orderBy('id');

t.test('inbound mail', async (t) => {
  const sink = await smtpSink(t);
  const env = await testApp(t, { smtpUrl: sink.url, mailFrom: 'Helpdesk <support@helpdesk.example>' });
  const tenant = await tenantFixture(env);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent', 'agent@helpdesk.example');
  const path = await inboundPath(env, admin);
  const ids = await vocab(env, admin);

  await t.test('a new address opens a ticket with a new customer and gets the numbered confirmation', async (t) => {
    const before = sink.messages.length;
    const raw = await compose({
      from: '"Ada Lovelace" <ada@customer.example>', to: 'support@helpdesk.example', subject: 'Engine will not start',
      text: 'It makes a noise.', html: '<p onclick="x()">It makes a <b>noise</b>.<script>alert(1)</script></p>',
    });
    const res = await deliver(env, path, raw);
    t.equal(res.statusCode, 202, res.body);
    const answer = res.json();
    t.equal(answer.created_ticket, true);
    const ticket = (await call(env, 'GET', `/tickets/${answer.ticket_id}`, { token: admin })).json();
    t.equal(ticket.channel, 'email');
    t.equal(ticket.subject, 'Engine will not start');
    const requester = (await call(env, 'GET', `/users/${ticket.requester_id}`, { token: admin })).json();
    t.match(requester, { email: 'ada@customer.example', name: 'Ada Lovelace', role: 'customer' });
    const [message] = await messagesOf(env, tenant.id, ticket.id);
    t.equal(message.body, 'It makes a noise.');
    t.notMatch(message.body_html, /script|onclick/, 'HTML sanitised');
    t.match(message.body_html, /<b>noise<\/b>/);
    const events = await env.deps.db('events').where({ tenant_id: tenant.id }).pluck('type');
    t.ok(events.includes('customer.created') && events.includes('ticket.created'));
    await waitForMail(sink, before + 1);
    const confirmation = sink.messages.slice(before).find((m) => m.to.includes('ada@customer.example'));
    t.ok(confirmation, 'confirmation sent');
    const parsed = await parse(confirmation!);
    t.match(parsed.subject, new RegExp(`^\\[#${ticket.ticket_number}\\] `));
    t.match(String(parsed.references), /<test\.[^>]+@customer\.example>/, 'threaded under the customer\'s own message');
  });

  await t.test('a reply threads by In-Reply-To, drops the quoted history, and keeps attachments and inline images', async (t) => {
    const first = await compose({ from: 'grace@customer.example', to: 'support@helpdesk.example', subject: 'Compiler bug', text: 'It crashes.' });
    const opened = (await deliver(env, path, first)).json();
    await waitForMail(sink, sink.messages.length + 1, 1000);
    const confirmation = sink.messages.filter((m) => m.to.includes('grace@customer.example')).pop()!;
    const ours = await parse(confirmation);
    const reply = await compose({
      from: 'grace@customer.example', to: 'support@helpdesk.example', subject: `Re: ${ours.subject}`,
      inReplyTo: ours.messageId, references: [ours.messageId!],
      text: `Here is the log.\n\nOn Monday, Helpdesk wrote:\n> ${MARKER}\n> We received your request`,
      html: `<p>Here is the log. <img src="cid:shot@x"></p><div>On Monday, Helpdesk wrote:<blockquote><div>${MARKER}</div><p>We received</p></blockquote></div>`,
      attachments: [
        { filename: 'crash.log', content: 'segfault at 0x0\n', contentType: 'text/plain' },
        { filename: 'shot.png', content: Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), contentType: 'image/png', cid: 'shot@x' },
      ],
    });
    const res = await deliver(env, path, reply);
    t.equal(res.statusCode, 202);
    const answer = res.json();
    t.equal(answer.created_ticket, false);
    t.equal(answer.ticket_id, opened.ticket_id, 'added to the same ticket');
    const messages = await messagesOf(env, tenant.id, opened.ticket_id);
    t.equal(messages.length, 2);
    t.equal(messages[1].body, 'Here is the log.', 'quoted history below the marker removed');
    t.notMatch(messages[1].body_html, /We received/);
    t.match(messages[1].body_html, /cid:shot@x/, 'inline image reference kept');
    t.equal(messages[1].is_agent, false);
    const files = await env.deps.db('attachments').where({ tenant_id: tenant.id, message_id: answer.message_id }).orderBy('id');
    t.same(files.map((f) => [f.filename, f.content_type, Number(f.size)]).sort(), [['crash.log', 'text/plain', 16], ['shot.png', 'image/png', 16]]);
    const stored = readdirSync(join(env.config.dataDir, 'attachments', tenant.id));
    t.ok(files.every((f) => stored.includes(f.id)), 'bytes kept in the attachment store');
  });

  await t.test('[#number] in the subject threads only for a known participant', async (t) => {
    const opened = (await deliver(env, path, await compose({ from: 'linus@customer.example', subject: 'Kernel panic', text: 'Help' }))).json();
    const ticket = (await call(env, 'GET', `/tickets/${opened.ticket_id}`, { token: admin })).json();
    const tagged = `Re: [#${ticket.ticket_number}] Kernel panic`;
    const fromRequester = (await deliver(env, path, await compose({ from: 'linus@customer.example', subject: tagged, text: 'More info' }))).json();
    t.equal(fromRequester.ticket_id, ticket.id, 'the requester');
    const fromStaff = (await deliver(env, path, await compose({ from: agent.email, subject: tagged, text: 'We are on it' }))).json();
    t.equal(fromStaff.ticket_id, ticket.id, 'staff');
    const staffMessage = (await messagesOf(env, tenant.id, ticket.id)).pop();
    t.match(staffMessage, { is_agent: true, is_private: false, author_id: agent.id }, 'staff mail is a public staff reply');
    const stranger = (await deliver(env, path, await compose({ from: 'mallory@evil.example', subject: tagged, text: 'Let me in' }))).json();
    t.equal(stranger.created_ticket, true, 'a stranger opens a ticket of their own');
    t.not(stranger.ticket_id, ticket.id);
  });

  await t.test('a customer reply reopens a resolved ticket; a closed one gets a new ticket', async (t) => {
    const opened = (await deliver(env, path, await compose({ from: 'barbara@customer.example', subject: 'VPN', text: 'Down' }))).json();
    const ticket = (await call(env, 'GET', `/tickets/${opened.ticket_id}`, { token: admin })).json();
    t.equal((await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: admin, body: { status_id: ids.status.resolved } })).statusCode, 200);
    const subject = `Re: [#${ticket.ticket_number}] VPN`;
    const reopened = (await deliver(env, path, await compose({ from: 'barbara@customer.example', subject, text: 'Down again' }))).json();
    t.equal(reopened.ticket_id, ticket.id);
    t.equal((await call(env, 'GET', `/tickets/${ticket.id}`, { token: admin })).json().status_id, ids.status.open, 'reopened');
    t.equal((await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: admin, body: { status_id: ids.status.closed } })).statusCode, 200);
    const after = (await deliver(env, path, await compose({ from: 'barbara@customer.example', subject, text: 'Still down' }))).json();
    t.equal(after.created_ticket, true);
    t.not(after.ticket_id, ticket.id, 'a closed ticket stays final');
    const links = (await call(env, 'GET', `/tickets/${after.ticket_id}/links`, { token: admin })).json();
    t.same(links.data.map((l: { linked_ticket: { id: string } }) => l.linked_ticket.id), [ticket.id], 'the new ticket is linked to the closed one');
    const back = (await call(env, 'GET', `/tickets/${ticket.id}/links`, { token: admin })).json();
    t.same(back.data.map((l: { linked_ticket: { id: string } }) => l.linked_ticket.id), [after.ticket_id], 'and the closed one shows the link');
  });

  await t.test('Cc addresses become collaborators: users as users, others as bare addresses, each once', async (t) => {
    const mail = await compose({
      from: 'ada@customer.example', to: 'support@helpdesk.example', subject: 'Invoice copy',
      cc: ['"Bob Builder" <bob@partner.example>', 'BOB@partner.example', agent.email, 'support@helpdesk.example'], text: 'Please send it to both of us',
    });
    const res = await deliver(env, path, mail);
    t.equal(res.statusCode, 202, 'a repeated Cc address does not abort the mail');
    const answer = res.json();
    t.equal(answer.created_ticket, true);
    const list = (await call(env, 'GET', `/tickets/${answer.ticket_id}/collaborators`, { token: admin })).json();
    const rows = list.data as { email: string; name: string | null; user_id: string | null }[];
    t.same(rows.map((c) => [c.email, c.user_id]).sort(), [['bob@partner.example', null], [agent.email, agent.id]].sort(),
      'the agent as a user; bob once; our own address never');
    t.equal(rows.find((c) => c.user_id === null)?.name, 'Bob Builder', "the bare address keeps the Cc's display name");
    const events = await env.deps.db('events').where({ tenant_id: tenant.id, ticket_id: answer.ticket_id, type: 'ticket.collaborator_added' });
    t.equal(events.length, 2, 'one ticket.collaborator_added each');
  });

  await t.test("the requester's own address in Cc is skipped, and the rest of the mail still lands", async (t) => {
    const eve = await userFixture(env, tenant.id, 'customer', 'eve@customer.example');
    t.equal((await call(env, 'PATCH', `/users/${eve.id}`, { token: admin, body: { alternate_emails: ['eve.home@customer.example'] } })).statusCode, 200);
    const res = await deliver(env, path, await compose({
      from: 'eve.home@customer.example', to: 'support@helpdesk.example', subject: 'From home',
      cc: ['eve@customer.example', 'frank@partner.example'], text: 'Copying my work address',
    }));
    t.equal(res.statusCode, 202);
    const answer = res.json();
    const ticket = (await call(env, 'GET', `/tickets/${answer.ticket_id}`, { token: admin })).json();
    t.equal(ticket.requester_id, eve.id, 'the requester found by the alternate address');
    const list = (await call(env, 'GET', `/tickets/${answer.ticket_id}/collaborators`, { token: admin })).json();
    t.same(list.data.map((c: { email: string }) => c.email), ['frank@partner.example'], 'the requester is not their own collaborator');
  });

  await t.test('attachment types are sniffed from the bytes, not taken from the mail', async (t) => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const mail = await compose({
      from: 'ada@customer.example', to: 'support@helpdesk.example', subject: 'Screenshots', text: 'Attached',
      attachments: [
        { filename: 'notes.txt', content: png, contentType: 'text/plain' },
        { filename: 'page.html', content: Buffer.from([0x00, 0x01, 0x02, 0xff]), contentType: 'text/html' },
      ],
    });
    const answer = (await deliver(env, path, mail)).json();
    const files = await env.deps.db('attachments').where({ tenant_id: tenant.id, message_id: answer.message_id }).orderBy('id');
    t.same(files.map((f) => [f.filename, f.content_type]), [['notes.txt', 'image/png'], ['page.html', 'application/octet-stream']]);
  });

  await t.test('loop guards: auto-replies, our own address, re-delivery, calendar replies', async (t) => {
    const tickets = await count(env, 'tickets', tenant.id);
    for (const headers of [{ 'Auto-Submitted': 'auto-replied' }, { Precedence: 'bulk' }, { Precedence: 'auto_reply' }, { 'X-Autoreply': 'yes' }]) {
      const res = await deliver(env, path, await compose({ from: 'bot@customer.example', subject: 'Out of office', text: 'Away', headers }));
      t.same(res.json(), { ignored: 'auto_reply' }, JSON.stringify(headers));
    }
    const explicitNo = await deliver(env, path, await compose({ from: 'human@customer.example', subject: 'Real', text: 'Real', headers: { 'Auto-Submitted': 'no' } }));
    t.equal(explicitNo.json().created_ticket, true, 'Auto-Submitted: no is a person');
    t.same((await deliver(env, path, await compose({ from: 'Support <SUPPORT@helpdesk.example>', subject: 'x', text: 'x' }))).json(), { ignored: 'own_address' });
    const once = await compose({ from: 'dup@customer.example', subject: 'Twice', text: 'Same message' });
    t.equal((await deliver(env, path, once)).json().created_ticket, true);
    t.same((await deliver(env, path, once)).json(), { ignored: 'duplicate' }, 're-delivery is idempotent');
    const both = await Promise.all([1, 2, 3].map(async () => deliver(env, path, await compose({ messageId: '<same@race.example>', from: 'race@customer.example', subject: 'Race', text: 'x' }))));
    t.equal(both.filter((r) => r.json().created_ticket).length, 1, 'concurrent re-deliveries create one ticket');
    const rsvp = await compose({
      from: 'guest@customer.example', subject: 'Accepted: Meeting', text: 'Accepted',
      icalEvent: { method: 'REPLY', content: 'BEGIN:VCALENDAR\r\nMETHOD:REPLY\r\nBEGIN:VEVENT\r\nUID:m1@meetings.helpdesk.invalid\r\nATTENDEE;PARTSTAT=ACCEPTED:mailto:guest@customer.example\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n' },
    });
    t.same((await deliver(env, path, rsvp)).json(), { ignored: 'calendar_reply' });
    t.equal(await count(env, 'tickets', tenant.id), tickets + 3, 'only the person, the first copy and one racer made tickets');
  });

  await t.test('a sender over the hourly limit is ignored, so a loop cannot flood the desk', async (t) => {
    const answers = [];
    for (let i = 0; i < SENDER_LIMIT_PER_HOUR + 2; i++) {
      answers.push((await deliver(env, path, await compose({ from: 'flood@customer.example', subject: `Flood ${i}`, text: 'x' }))).json());
    }
    t.equal(answers.filter((a) => a.created_ticket).length, SENDER_LIMIT_PER_HOUR);
    t.same(answers.slice(-2), [{ ignored: 'rate_limited' }, { ignored: 'rate_limited' }]);
    t.equal((await deliver(env, path, await compose({ from: 'other@customer.example', subject: 'Fine', text: 'x' }))).json().created_ticket, true, 'other senders are unaffected');
  });

  await t.test('charsets: ISO-8859-1 and Shift_JIS arrive as UTF-8', async (t) => {
    const latin = Buffer.concat([
      Buffer.from('From: jose@customer.example\r\nTo: support@helpdesk.example\r\nSubject: =?ISO-8859-1?Q?Se=F1al_d=E9bil?=\r\nMessage-ID: <latin1@customer.example>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=ISO-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n\r\n'),
      Buffer.from('La se\xf1al es d\xe9bil en la ca\xf1ada.\r\n', 'latin1'),
    ]);
    const a = (await deliver(env, path, latin)).json();
    t.equal((await call(env, 'GET', `/tickets/${a.ticket_id}`, { token: admin })).json().subject, 'Señal débil');
    t.equal((await messagesOf(env, tenant.id, a.ticket_id))[0].body, 'La señal es débil en la cañada.');
    const sjisBody = Buffer.from('82b182f182c982bf82cd81418376838a8393835e815b82aa93ae82ab82dc82b982f1', 'hex'); // こんにちは、プリンターが動きません
    const sjis = Buffer.concat([
      Buffer.from('From: taro@customer.example\r\nSubject: =?Shift_JIS?B?g3aDioOTg16BWw==?=\r\nMessage-ID: <sjis@customer.example>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=Shift_JIS\r\nContent-Transfer-Encoding: 8bit\r\n\r\n'),
      sjisBody, Buffer.from('\r\n'),
    ]);
    const b = (await deliver(env, path, sjis)).json();
    t.equal((await call(env, 'GET', `/tickets/${b.ticket_id}`, { token: admin })).json().subject, 'プリンター');
    t.equal((await messagesOf(env, tenant.id, b.ticket_id))[0].body, 'こんにちは、プリンターが動きません');
  });

  await t.test('malformed MIME, no sender, empty bodies and the wrong content type', async (t) => {
    const broken = 'From: broken@customer.example\r\nSubject: Broken\r\nMessage-ID: <broken@customer.example>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="nope"\r\n\r\n--wrong\r\nContent-Type: text/plain\r\n\r\nStill readable text\r\n--nope\r\nContent-Type: application/octet-stream; name=x.bin\r\nContent-Transfer-Encoding: base64\r\n\r\n@@@not base64@@@\r\n';
    const res = await deliver(env, path, broken);
    t.equal(res.statusCode, 202, res.body);
    t.equal(res.json().created_ticket, true, 'lenient parsing still makes a ticket');
    t.same((await deliver(env, path, 'Subject: nobody\r\n\r\nno from\r\n')).json(), { ignored: 'no_sender' });
    t.same((await deliver(env, path, '\u0000\u0001garbage')).json(), { ignored: 'no_sender' });
    const empty = await env.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'message/rfc822' }, payload: '' });
    t.equal(empty.statusCode, 422);
    const json = await env.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json' }, payload: '{}' });
    t.equal(json.statusCode, 415);
    t.equal(json.json().code, 'unsupported_media_type');
    const elsewhere = await env.app.inject({ method: 'POST', url: '/api/v1/tickets', headers: { 'content-type': 'message/rfc822', authorization: `Bearer ${admin}` }, payload: 'x' });
    t.equal(elsewhere.statusCode, 415, 'no other route takes a raw message');
  });

  await t.test('a 25 MB message is accepted whole; beyond the route limit is 413', async (t) => {
    const big = Buffer.alloc(25 * 1024 * 1024, 7);
    const raw = await compose({ from: 'big@customer.example', subject: 'Disk image', text: 'Attached', attachments: [{ filename: 'disk.img', content: big, contentType: 'application/octet-stream' }] });
    t.ok(raw.length > 33 * 1024 * 1024);
    const res = await deliver(env, path, raw);
    t.equal(res.statusCode, 202, res.body.slice(0, 300));
    const file = await env.deps.db('attachments').where({ tenant_id: tenant.id, message_id: res.json().message_id }).first();
    t.equal(Number(file.size), big.length);
    const over = await compose({ from: 'bigger@customer.example', subject: 'Too big', text: 'Attached', attachments: [{ filename: 'huge.img', content: Buffer.alloc(25 * 1024 * 1024 + 1, 1) }] });
    const kept = (await deliver(env, path, over)).json();
    t.equal(kept.created_ticket, true, 'a file over the attachment limit does not lose the message');
    t.equal(await env.deps.db('attachments').where({ tenant_id: tenant.id, message_id: kept.message_id }).count({ n: '*' }).then((r) => Number(r[0]!.n)), 0);
    t.match((await messagesOf(env, tenant.id, kept.ticket_id))[0].body, /Attachment huge\.img \(26214401 bytes\) was not kept/);
    const tooBig = await env.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'message/rfc822' }, payload: Buffer.alloc(41 * 1024 * 1024, 65) });
    t.equal(tooBig.statusCode, 413);
  });

  await t.test('unknown, forged and other tenants\' tokens', async (t) => {
    const other = await tenantFixture(env);
    const otherPath = await inboundPath(env, other.admin.token);
    t.not(otherPath, path);
    for (const bad of ['/api/v1/integrations/email/inbound/nope', path.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')), path.replace(tenant.id.replace(/-/g, ''), other.id.replace(/-/g, ''))]) {
      const res = await deliver(env, bad, await compose({ from: 'x@customer.example', subject: 'x', text: 'x' }));
      t.equal(res.statusCode, 404, bad);
      t.equal(res.json().code, 'resource_not_found');
    }
  });
});

t.test('two tenants mailing each other do not loop', async (t) => {
  const sink = await smtpSink(t);
  const env = await testApp(t, { smtpUrl: sink.url, webhooksAllowPrivate: true });
  const a = await tenantFixture(env);
  const b = await tenantFixture(env);
  const [host, port] = sink.url.replace('smtp://', '').split(':');
  for (const [tenant, address] of [[a, 'desk@a.example'], [b, 'desk@b.example']] as const) {
    const res = await call(env, 'POST', '/mail-settings', { token: tenant.admin.token, body: { smtp: { host, port: Number(port), security: 'none', from_address: address } } });
    t.equal(res.statusCode, 200, res.body);
  }
  const paths = { 'desk@a.example': await inboundPath(env, a.admin.token), 'desk@b.example': await inboundPath(env, b.admin.token) };
  // A's desk writes to B's desk (say a customer set one up as the other's requester).
  let res = await deliver(env, paths['desk@b.example'], await compose({ from: 'person@a.example', to: 'desk@b.example', subject: 'Hello B', text: 'Start' }));
  t.equal(res.json().created_ticket, true);
  // Pump: every mail the sink receives for a desk is delivered to that desk, as a mail server would.
  let delivered = 0;
  for (let round = 0; round < 5; round++) {
    await new Promise((r) => setTimeout(r, 300));
    const pending = sink.messages.slice(delivered);
    delivered = sink.messages.length;
    for (const mail of pending) {
      for (const to of mail.to) {
        const target = paths[to as keyof typeof paths];
        if (target) {
          res = await deliver(env, target, mail.source);
          t.same(res.json(), { ignored: 'auto_reply' }, 'our notifications are auto-generated, so the other desk ignores them');
        }
      }
    }
  }
  t.equal(Number((await env.deps.db('tickets').count({ n: '*' }))[0]!.n), 1, 'one ticket in all');
  t.ok(sink.messages.length <= 2, 'and the mail stops');
});
