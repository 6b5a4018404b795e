import t from 'tap';
import { CLI_ACTOR, SYSTEM_ACTOR } from '../../../src/core/context.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { recordEvent } from '../../../src/events/record.js';
import { addTicketMessage } from '../../../src/mail/conversation-port.js';
import { sendDueNotifications } from '../../../src/mail/send.js';
import { runJob } from '../../../src/jobs/runner.js';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { smtpSink, waitForMail, type SmtpSink } from '../../helpers/smtp.js';
import { headerOf, parse } from '../../helpers/mail.js';
import { openTicket, vocab } from '../../helpers/tickets.js';

/** Notification mail (CONTRACT §14): recipients and exclusions, outbox after commit, headers, retries. */

const MARKER = '##- Reply above this line -##';

async function settle(env: TestEnv, sink: SmtpSink, before: number, wait = 400) {
  await waitForMail(sink, before + 1, wait);
  await new Promise((r) => setTimeout(r, 150));
  return sink.messages.slice(before);
}

const rowsOf = (env: TestEnv, tenantId: string) => env.deps.db('notifications').where({ tenant_id: tenantId }).orderBy('created_at').orderBy('id');

t.test('notification mail', async (t) => {
  const sink = await smtpSink(t);
  const env = await testApp(t, { smtpUrl: sink.url, mailFrom: 'Helpdesk <support@helpdesk.example>' });
  const tenant = await tenantFixture(env);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent');
  const lead = await userFixture(env, tenant.id, 'agent');
  const member = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const ids = await vocab(env, admin);
  const team = (await call(env, 'POST', '/teams', { token: admin, body: { name: 'Support' } })).json();
  t.equal((await call(env, 'POST', `/teams/${team.id}/members`, { token: admin, body: { user_id: lead.id, is_lead: true } })).statusCode, 201);
  t.equal((await call(env, 'POST', `/teams/${team.id}/members`, { token: admin, body: { user_id: member.id } })).statusCode, 201);

  await t.test('a new ticket: the requester gets the numbered confirmation, the team the agent mail', async (t) => {
    const before = sink.messages.length;
    const ticket = await openTicket(env, customer.token, { subject: 'Printer <b>jam</b>', body: 'It jams & squeaks' });
    t.equal((await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: admin, body: { team_id: team.id } })).statusCode, 200);
    // The team was set after the create, so the create's agent mail had nobody; open another with the team set.
    const staffTicket = await openTicket(env, agent.token, { subject: 'Router down', body: 'No lights', requester_id: customer.id, team_id: team.id });
    const mails = await settle(env, sink, before);
    const confirmation = mails.find((m) => m.to.includes(customer.email) && m.raw.includes(`[#${ticket.ticket_number}]`));
    t.ok(confirmation, 'the requester who opened it gets the confirmation');
    const parsed = await parse(confirmation!);
    t.match(parsed.subject, new RegExp(`^\\[#${ticket.ticket_number}\\] We received your request: Printer <b>jam</b>$`));
    t.equal(headerOf(parsed, 'auto-submitted'), 'auto-generated');
    t.match(parsed.messageId, /^<n\.[0-9a-f-]{36}@helpdesk\.example>$/);
    t.equal(parsed.inReplyTo, `<ticket.${ticket.id}@helpdesk.example>`);
    t.match(String(parsed.references), `<ticket.${ticket.id}@helpdesk.example>`);
    t.ok((parsed.html as string).startsWith('<div') && (parsed.html as string).includes(MARKER), 'the reply marker heads the HTML');
    t.ok(parsed.text!.startsWith(MARKER), 'and the text part');
    t.match(parsed.html as string, /It jams &amp; squeaks/, 'values are escaped in the HTML');
    t.match(parsed.text!, /It jams & squeaks/, 'the text part reads plainly');
    const teamMails = mails.filter((m) => m.raw.includes(`[#${staffTicket.ticket_number}]`));
    t.same(teamMails.flatMap((m) => m.to).sort(), [customer.email, lead.email, member.email].sort(), 'no assignee: the team members; the requester their confirmation');
    const customerName = (await env.deps.db('users').where({ tenant_id: tenant.id, id: customer.id }).first('name')).name as string;
    const agentMail = await parse(teamMails.find((m) => m.to.includes(member.email))!);
    t.match(agentMail.text!, `${customerName} opened ticket #${staffTicket.ticket_number}`, 'the agent mail names the requester');
    t.match((await parse(teamMails.find((m) => m.to.includes(customer.email))!)).text!, `Hello ${customerName},`, 'the confirmation greets them');
    const actorMail = mails.filter((m) => m.to.includes(agent.email));
    t.equal(actorMail.length, 0, 'never the actor');
  });

  await t.test('assignment, replies, private notes and resolution', async (t) => {
    const ticket = await openTicket(env, customer.token, { subject: 'Lost password', body: 'Help' });
    await settle(env, sink, sink.messages.length - 1, 50);
    let before = sink.messages.length;
    t.equal((await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: admin, body: { assigned_agent_id: agent.id } })).statusCode, 200);
    let mails = await settle(env, sink, before);
    t.same(mails.map((m) => m.to), [[agent.email]], 'ticket.assigned to the new assignee');
    t.match(mails[0]!.raw, /Assigned to you: Lost password/);
    // The template values name the people: the new assignee, the requester.
    const nameOf = async (id: string) => (await env.deps.db('users').where({ tenant_id: tenant.id, id }).first('name')).name as string;
    const assignedText = (await parse(mails[0]!)).text!;
    t.match(assignedText, `Hello ${await nameOf(agent.id)},`);
    t.match(assignedText, `from ${await nameOf(customer.id)} is now assigned to you`);

    before = sink.messages.length;
    t.equal((await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: lead.token, body: { assigned_agent_id: lead.id } })).statusCode, 200);
    mails = await settle(env, sink, before, 300);
    t.same(mails, [], 'an agent assigning themselves gets no mail');

    before = sink.messages.length;
    await inTransaction(env.deps, { tenantId: tenant.id, actor: SYSTEM_ACTOR, now: new Date() }, (ctx) =>
      addTicketMessage(ctx, ticket.id, { body: 'Try the reset link', channel: 'email', author: { id: lead.id, name: 'Lead Agent', isAgent: true } }));
    mails = await settle(env, sink, before);
    t.same(mails.map((m) => m.to), [[customer.email]], 'a public staff reply goes to the requester');
    const reply = await parse(mails[0]!);
    t.match(reply.text!, /Try the reset link/);
    t.match(reply.text!, /Lead Agent/);

    before = sink.messages.length;
    await inTransaction(env.deps, { tenantId: tenant.id, actor: SYSTEM_ACTOR, now: new Date() }, (ctx) =>
      addTicketMessage(ctx, ticket.id, { body: 'Did not work', channel: 'email', author: { id: customer.id, name: 'Customer', isAgent: false } }));
    mails = await settle(env, sink, before);
    t.same(mails.map((m) => m.to), [[lead.email]], 'a customer message goes to the assignee');
    t.match(mails[0]!.raw, /Customer replied/);
    t.match((await parse(mails[0]!)).text!, `${await nameOf(customer.id)} replied on ticket #${ticket.ticket_number}`, 'the requester named');

    before = sink.messages.length;
    await inTransaction(env.deps, { tenantId: tenant.id, actor: SYSTEM_ACTOR, now: new Date() }, (ctx) =>
      recordEvent(ctx, { type: 'ticket.message_created', subjectType: 'ticket', ticketId: ticket.id, actor: { id: lead.id, name: 'Lead' },
        data: { ticket_id: ticket.id, message_id: ticket.id, author_id: lead.id, author_name: 'Lead', is_agent: true, is_private: true, body: 'secret', body_html: null } }));
    mails = await settle(env, sink, before, 300);
    t.same(mails, [], 'a private note mails nobody');

    before = sink.messages.length;
    t.equal((await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: lead.token, body: { status_id: ids.status.resolved } })).statusCode, 200);
    mails = await settle(env, sink, before);
    t.same(mails.map((m) => m.to), [[customer.email]], 'ticket.resolved to the requester');
    t.match(mails[0]!.raw, /Resolved: Lost password/);
    t.match(mails[0]!.raw, /Rate our support/);
  });

  await t.test('a public staff reply mails the requester and the active collaborators, each once', async (t) => {
    const colleague = await userFixture(env, tenant.id, 'customer');
    const departed = await userFixture(env, tenant.id, 'customer');
    const requester = await userFixture(env, tenant.id, 'customer');
    const ticket = await openTicket(env, agent.token, { subject: 'Shared mailbox', body: 'Please set it up', requester_id: requester.id });
    for (const body of [{ user_id: colleague.id }, { user_id: departed.id }, { email: 'Boss@Example.org', name: 'The Boss' }]) {
      t.equal((await call(env, 'POST', `/tickets/${ticket.id}/collaborators`, { token: agent.token, body })).statusCode, 201);
    }
    await env.deps.db('users').where({ tenant_id: tenant.id, id: departed.id }).update({ active: false });
    await settle(env, sink, sink.messages.length - 1, 300);

    const reply = async (body: string) => {
      const before = sink.messages.length;
      t.equal((await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body } })).statusCode, 201);
      return settle(env, sink, before);
    };
    let mails = await reply('Done: it is in your mail client now.');
    t.same(mails.flatMap((m) => m.to).sort(), [requester.email, colleague.email, 'boss@example.org'].sort(),
      'the requester, the user collaborator and the bare address; not the inactive user');
    t.ok(mails.every((m) => m.raw.includes(`[#${ticket.ticket_number}]`)), 'each the reply mail of this ticket');

    await env.deps.db('users').where({ tenant_id: tenant.id, id: requester.id }).update({ active: false });
    mails = await reply('One more thing: the calendar is shared too.');
    t.same(mails.flatMap((m) => m.to).sort(), [colleague.email, 'boss@example.org'].sort(), 'an inactive requester gets nothing; the collaborators still do');
  });

  await t.test('sla.warning goes to the team leads and the admins, from the SLA event', async (t) => {
    const ticket = await openTicket(env, agent.token, { subject: 'Slow site', body: 'Slow', requester_id: customer.id, team_id: team.id });
    await settle(env, sink, sink.messages.length - 1, 50);
    const before = sink.messages.length;
    await inTransaction(env.deps, { tenantId: tenant.id, actor: SYSTEM_ACTOR, now: new Date() }, (ctx) =>
      recordEvent(ctx, { type: 'ticket.sla_warning', subjectType: 'ticket', ticketId: ticket.id, actor: null, from: new Date().toISOString(), to: null,
        data: { ticket_id: ticket.id, from: new Date().toISOString(), to: null, actor_id: null, actor_name: null } }));
    const mails = await settle(env, sink, before);
    t.same(mails.flatMap((m) => m.to).sort(), [lead.email, tenant.admin.email].sort());
    t.match(mails[0]!.raw, /SLA deadline approaching: Slow site/);
  });

  await t.test('the sla-escalation job past a warning instant mails sla.warning to the leads and the admins', async (t) => {
    // Urgent: first response due after 15 minutes, warned at 80% (12 minutes).
    const ticket = await openTicket(env, agent.token, { subject: 'Checkout broken', body: 'x', requester_id: customer.id, team_id: team.id, priority_id: ids.priority.urgent });
    await settle(env, sink, sink.messages.length - 1, 100);
    const created = Date.parse(ticket.created_at);
    let before = sink.messages.length;
    await runJob(env.deps, 'sla-escalation', { now: new Date(created + 5 * 60_000) });
    await new Promise((r) => setTimeout(r, 300));
    t.same(sink.messages.slice(before).filter((m) => m.raw.includes(`[#${ticket.ticket_number}]`)), [], 'nothing before the warning instant');
    before = sink.messages.length;
    await runJob(env.deps, 'sla-escalation', { now: new Date(created + 13 * 60_000) });
    const mails = (await settle(env, sink, before)).filter((m) => m.raw.includes(`[#${ticket.ticket_number}]`));
    t.same(mails.flatMap((m) => m.to).sort(), [lead.email, tenant.admin.email].sort(), 'the team lead and the admin, not the plain member');
    t.match(mails[0]!.raw, /SLA deadline approaching: Checkout broken/);
    const rows = await rowsOf(env, tenant.id).where({ ticket_id: ticket.id, identifier: 'sla.warning' });
    t.equal(rows.length, 2, 'one outbox row per recipient');
    t.ok(rows.every((r) => r.status === 'sent'), 'sent after the job committed');
  });

  await t.test('{{csat.url}}: the site without CSAT; with CSAT on, the survey the resolution issued', async (t) => {
    const linkOf = async (mail: { to: string[] }) => {
      const html = (await parse(mail as never)).html as string;
      return /href="([^"]*)">Rate our support/.exec(html)?.[1];
    };
    const plain = await openTicket(env, customer.token, { subject: 'No survey', body: 'x' });
    await settle(env, sink, sink.messages.length - 1, 100);
    let before = sink.messages.length;
    t.equal((await call(env, 'PATCH', `/tickets/${plain.id}`, { token: agent.token, body: { status_id: ids.status.resolved } })).statusCode, 200);
    let mails = await settle(env, sink, before);
    t.equal(await linkOf(mails.find((m) => m.to.includes(customer.email))!), env.config.siteUrl, 'CSAT off: the link is the site');

    t.equal((await call(env, 'PATCH', '/csat/settings', { token: admin, body: { enabled: true } })).statusCode, 200);
    const rated = await openTicket(env, customer.token, { subject: 'Rate me', body: 'x' });
    await settle(env, sink, sink.messages.length - 1, 100);
    before = sink.messages.length;
    t.equal((await call(env, 'PATCH', `/tickets/${rated.id}`, { token: agent.token, body: { status_id: ids.status.resolved } })).statusCode, 200);
    mails = await settle(env, sink, before);
    const link = await linkOf(mails.find((m) => m.to.includes(customer.email))!);
    t.match(link, new RegExp(`^${env.config.siteUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/csat/cs_[A-Za-z0-9_-]+$`), 'the survey link');
    t.equal(await env.deps.db('csat_surveys').where({ tenant_id: tenant.id, ticket_id: rated.id }).count({ n: '*' }).then((r) => Number(r[0]!.n)), 1,
      'one survey: the mail printed the one the resolution issued');
    const token = decodeURIComponent(link!.split('/csat/')[1]!);
    const submitted = await call(env, 'POST', `/csat/${token}`, { body: { score: 5 } });
    t.equal(submitted.statusCode, 200, 'the link carries a working token');
    t.equal(submitted.json().ticket_id, rated.id);
    t.equal((await call(env, 'PATCH', '/csat/settings', { token: admin, body: { enabled: false } })).statusCode, 200);
  });

  await t.test('notification_preferences.email false stops agent mail, never customer mail', async (t) => {
    const prefs = (token: string, email: boolean) => call(env, 'PATCH', '/auth/me', { token, body: { notification_preferences: { email } } });
    t.equal((await prefs(member.token, false)).statusCode, 200);
    t.equal((await prefs(customer.token, false)).statusCode, 200);
    const before = sink.messages.length;
    const ticket = await openTicket(env, agent.token, { subject: 'Muted member', body: 'x', requester_id: customer.id, team_id: team.id });
    const mails = (await settle(env, sink, before)).filter((m) => m.raw.includes(`[#${ticket.ticket_number}]`));
    t.same(mails.flatMap((m) => m.to).sort(), [customer.email, lead.email].sort(), 'the lead gets the agent mail, the muted member not; the customer still gets theirs');
    t.equal((await prefs(member.token, true)).statusCode, 200);
    t.equal((await prefs(customer.token, true)).statusCode, 200);
  });

  await t.test('inactive users get nothing; the recipient locale picks the translation', async (t) => {
    const german = await userFixture(env, tenant.id, 'customer');
    t.equal((await call(env, 'PATCH', `/users/${german.id}`, { token: admin, body: { locale: 'de' } })).statusCode, 200);
    let before = sink.messages.length;
    await openTicket(env, german.token, { subject: 'Drucker', body: 'Kaputt' });
    let mails = await settle(env, sink, before);
    const parsed = await parse(mails.find((m) => m.to.includes(german.email))!);
    t.match(parsed.subject, /Wir haben Ihre Anfrage erhalten: Drucker/);

    const gone = await userFixture(env, tenant.id, 'agent');
    const ticket = await openTicket(env, agent.token, { subject: 'Quiet', body: 'x', requester_id: customer.id, assigned_agent_id: gone.id });
    await settle(env, sink, sink.messages.length - 1, 100);
    t.equal((await call(env, 'PATCH', `/users/${gone.id}`, { token: admin, body: { active: false } })).statusCode, 200);
    before = sink.messages.length;
    await inTransaction(env.deps, { tenantId: tenant.id, actor: SYSTEM_ACTOR, now: new Date() }, (ctx) =>
      addTicketMessage(ctx, ticket.id, { body: 'Anyone?', channel: 'email', author: { id: customer.id, name: 'Customer', isAgent: false } }));
    mails = await settle(env, sink, before, 300);
    t.same(mails, [], 'the inactive assignee is not mailed');
  });

  await t.test('a rolled-back change writes no row and sends nothing', async (t) => {
    const ticket = await openTicket(env, customer.token, { subject: 'Rollback', body: 'x' });
    await settle(env, sink, sink.messages.length - 1, 100);
    const before = sink.messages.length;
    const rowsBefore = (await rowsOf(env, tenant.id)).length;
    await t.rejects(inTransaction(env.deps, { tenantId: tenant.id, actor: CLI_ACTOR, now: new Date() }, async (ctx) => {
      await addTicketMessage(ctx, ticket.id, { body: 'Staff reply that will roll back', channel: 'email', author: { id: lead.id, name: 'Lead', isAgent: true } });
      throw new Error('boom');
    }), /boom/);
    await new Promise((r) => setTimeout(r, 400));
    t.equal(sink.messages.length, before, 'no mail');
    t.equal((await rowsOf(env, tenant.id)).length, rowsBefore, 'no outbox row');
    await runJob(env.deps, 'mail-send', { now: new Date(Date.now() + 3_600_000) });
    t.equal(sink.messages.length, before, 'and the job finds nothing to send');
  });
});

t.test('failed sends retry after 1, 5 and 30 minutes, then fail', async (t) => {
  const env = await testApp(t, { smtpUrl: 'smtp://127.0.0.1:9' });
  const tenant = await tenantFixture(env);
  const customer = await userFixture(env, tenant.id, 'customer');
  const start = new Date();
  await openTicket(env, customer.token, { subject: 'Unsendable', body: 'x' });
  await new Promise((r) => setTimeout(r, 500));
  let [row] = await rowsOf(env, tenant.id);
  t.equal(row.status, 'pending');
  t.equal(row.attempts, 1, 'the after-commit attempt failed');
  t.ok(row.last_error);
  const ladder = [1, 5, 30];
  let now = new Date(row.next_attempt_at);
  t.ok(Math.abs(now.getTime() - start.getTime() - 60_000) < 5_000, 'next attempt a minute later');
  t.same(await sendDueNotifications(env.deps, new Date(now.getTime() - 1000)), { sent: 0, retrying: 0, failed: 0 }, 'not due before its time');
  for (let i = 1; i < 3; i++) {
    await runJob(env.deps, 'mail-send', { now });
    [row] = await rowsOf(env, tenant.id);
    t.equal(row.attempts, i + 1);
    t.equal(new Date(row.next_attempt_at).getTime() - now.getTime(), ladder[i]! * 60_000, `then after ${ladder[i]} minutes`);
    now = new Date(row.next_attempt_at);
  }
  await runJob(env.deps, 'mail-send', { now });
  [row] = await rowsOf(env, tenant.id);
  t.equal(row.status, 'failed');
  t.equal(row.attempts, 4);
  t.equal(row.next_attempt_at, null);
});
