import t from 'tap';
import { createHash } from 'node:crypto';
import { testApp, tenantFixture, call } from '../../helpers/app.js';
import { emptyMariaDb, osticketDb, osticketMissing } from '../../helpers/osticket.js';
import { CLI_ACTOR } from '../../../src/core/context.js';
import { AppError } from '../../../src/core/errors.js';
import { runLegacyImport } from '../../../src/legacy-import/writer.js';
import { wireDomain } from '../../../src/wiring.js';

t.test('osTicket import of the sample', { skip: osticketMissing }, async (t) => {
  wireDomain();
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const source = osticketDb(t);
  const db = env.deps.db;
  const now = new Date('2026-11-23T12:00:00Z');
  const numbers = Object.fromEntries(source.sql('SELECT ticket_id, number FROM ost_ticket').trim().split('\n').map((l) => l.split('\t')));
  const run = (options: { dryRun?: boolean } = {}) => runLegacyImport(env.deps, tenant.id, CLI_ACTOR, now, { source: source.dsn, ...options });
  const count = async (table: string) => Number((await db(table).where({ tenant_id: tenant.id }).count({ n: '*' }))[0]!.n);

  await t.test('a dry run counts everything and writes nothing', async (t) => {
    const before = { tickets: await count('tickets'), users: await count('users'), map: await count('legacy_import_map') };
    const result = await run({ dryRun: true });
    t.same(result.counts, { teams: 3, agents: 3, organizations: 1, customers: 5, ticket_types: 1, tickets: 8, messages: 16, notes: 5, attachments: 1 });
    t.same(result.errors.map((e) => e.kind), []);
    t.equal(result.dry_run, true);
    t.same({ tickets: await count('tickets'), users: await count('users'), map: await count('legacy_import_map') }, before);
  });

  await t.test('the import maps every entity', async (t) => {
    const result = await run();
    t.same(result.counts, { teams: 3, agents: 3, organizations: 1, customers: 5, ticket_types: 1, tickets: 8, messages: 16, notes: 5, attachments: 1 });
    t.same(result.errors, []);

    const users = await db('users').where({ tenant_id: tenant.id });
    const byEmail = (email: string) => users.find((u) => u.email === email);
    t.match(byEmail('ada.admin@acme.example'), { role: 'admin', name: 'Ada Admin', password_hash: null });
    t.match(byEmail('bob.builder@acme.example'), { role: 'agent', name: 'Bob Builder', password_hash: null });
    t.match(byEmail('brian.smith@example.com'), { role: 'customer', alternate_emails: ['b.smith@work.example.com'] });
    const org = await db('organizations').where({ tenant_id: tenant.id, name: 'Globex Corporation' }).first();
    t.same(org.domains, ['globex.example']);
    t.equal(byEmail('alice.johnson@globex.example').organization_id, org.id);
    t.equal(byEmail('chloe.dubois@example.fr').name, 'Chloé Dubois');

    const teams = await db('teams').where({ tenant_id: tenant.id });
    const team = (name: string) => teams.find((x) => x.name === name)!.id;
    const members = await db('team_members').where({ tenant_id: tenant.id });
    const memberOf = (email: string) => members.filter((m) => m.user_id === byEmail(email).id).map((m) => teams.find((x) => x.id === m.team_id).name).sort();
    t.same(memberOf('bob.builder@acme.example'), ['Level I Support', 'Sales', 'Support'], 'department, extra department access and team');
    t.same(memberOf('carol.chen@acme.example'), ['Level I Support', 'Sales', 'Support']);

    const tickets = await db('tickets').where({ tenant_id: tenant.id }).orderBy('created_at');
    t.equal(tickets.length, 8);
    const statuses = Object.fromEntries((await db('statuses').where({ tenant_id: tenant.id })).map((s) => [s.id, s.key]));
    const priorities = Object.fromEntries((await db('priorities').where({ tenant_id: tenant.id })).map((s) => [s.id, s.key]));
    const [one, two, three, four, five, six, seven] = tickets;
    t.match(one, { subject: 'Cannot log in to the customer portal', channel: 'webform', assigned_agent_id: byEmail('bob.builder@acme.example').id, team_id: team('Support'), ticket_number: Number(numbers['1']) });
    t.equal(statuses[one.status_id], 'closed');
    t.equal(priorities[one.priority_id], 'high');
    t.equal(one.closed_at.toISOString(), '2024-02-01T11:30:00.000Z');
    t.equal(one.created_at.toISOString(), '2024-02-01T08:15:00.000Z');
    t.equal(statuses[two.status_id], 'resolved');
    t.equal(two.resolved_at.toISOString(), '2024-02-04T09:00:00.000Z');
    t.equal(two.channel, 'email');
    t.equal(three.subject, 'Demande de remboursement — commande nº 998', 'UTF-8 subject');
    t.equal(statuses[three.status_id], 'open');
    t.equal(three.closed_at, null);
    t.match(four, { channel: 'api', tags: ['osticket-source-phone'], team_id: team('Level I Support'), assigned_agent_id: null });
    t.equal(priorities[four.priority_id], 'urgent');
    t.equal(priorities[five.priority_id], 'low');
    t.equal(seven.channel, 'api');
    t.same(seven.tags, []);
    t.equal(seven.type_id, null, 'no help topic');
    t.not(one.type_id, null);
    t.equal(one.organization_id, org.id);
    t.equal(one.sla, null, 'no SLA engine ran');

    // Thread ids differ from ticket ids from ticket 3 on: entries must land on the right ticket.
    const messages = await db('messages').where({ tenant_id: tenant.id }).orderBy('created_at');
    const on = (ticket: { id: string }) => messages.filter((m) => m.ticket_id === ticket.id);
    t.equal(on(one).length, 6);
    t.equal(on(two).length, 4, 'the task thread entry stays out; the task-closed note is the ticket\'s');
    t.match(on(three).map((m) => m.body), [/^Bonjour/, /^Waiting for the warehouse/]);
    t.match(on(four).map((m) => [m.is_private, m.is_agent]), [[false, false], [true, true]]);
    t.equal(on(six).length, 1);
    const first = on(one)[0];
    t.match(first, { is_agent: false, is_private: false, author_id: byEmail('alice.johnson@globex.example').id, author_name: 'Alice Johnson' });
    t.match(first.body_html, /<b>/);
    t.equal(first.created_at.toISOString(), '2024-02-01T08:15:00.000Z');
    t.match(on(one)[1], { is_agent: true, is_private: false, author_id: byEmail('bob.builder@acme.example').id });
    t.match(on(two)[0], { body_html: null, body: /^Hello,\n\nInvoice 4411/ });

    const [file] = await db('attachments').where({ tenant_id: tenant.id });
    t.match(file, { filename: 'mail-trace.log', content_type: 'text/plain', ticket_id: six.id, message_id: on(six)[0].id });
    const bytes = Buffer.from(source.sql("SELECT HEX(filedata) FROM ost_file_chunk WHERE file_id = 3").trim(), 'hex');
    t.equal(Number(file.size), bytes.length);
    t.equal(file.sha256, createHash('sha256').update(bytes).digest('hex'));
    const res = await call(env, 'GET', `/attachments/${file.id}/stream`, { token: tenant.admin.token });
    t.equal(res.statusCode, 200);
    t.ok(res.rawPayload.equals(bytes), 'the exact bytes are served');

    const collaborators = await db('ticket_collaborators').where({ tenant_id: tenant.id });
    t.match(collaborators, [{ ticket_id: one.id, user_id: byEmail('dmitri.ivanov@globex.example').id }]);

    const events = await db('events').where({ tenant_id: tenant.id }).whereNotNull('ticket_id');
    t.equal(events.length, 8, 'one event per ticket, nothing else');
    t.same([...new Set(events.map((e) => e.type))], ['ticket.imported']);
    t.equal(await count('webhook_deliveries'), 0);
    const timeline = await call(env, 'GET', `/tickets/${one.id}/events`, { token: tenant.admin.token });
    t.equal(timeline.statusCode, 200, timeline.body);
    t.same(timeline.json().data.map((e: { type: string }) => e.type), ['imported'], 'the timeline shows the import');

    // The sequence continues above the largest kept number.
    const last = (await db.raw('SELECT pg_sequence_last_value(?::regclass) AS n', [`ticket_numbers."${tenant.id}"`])).rows[0].n;
    t.equal(Number(last), Math.max(...Object.values(numbers).map(Number)));
  });

  await t.test('a re-run creates nothing', async (t) => {
    const before = { tickets: await count('tickets'), messages: await count('messages'), events: await count('events') };
    const result = await run();
    t.same(Object.values(result.counts).reduce((a, b) => a + b, 0), 0);
    t.same(result.skipped, { teams: 3, agents: 3, organizations: 1, customers: 5, ticket_types: 1, tickets: 8, messages: 16, notes: 5, attachments: 1 });
    t.same({ tickets: await count('tickets'), messages: await count('messages'), events: await count('events') }, before);
  });

  await t.test('a run cut after some batches resumes without duplicates', async (t) => {
    const other = await tenantFixture(env);
    // One batch at a time, so the cut leaves exactly one batch of entries behind.
    const go = (onProgress?: (phase: string) => void) => runLegacyImport(env.deps, other.id, CLI_ACTOR, now, { source: source.dsn, batchSize: 2, parallel: 1, onProgress });
    await t.rejects(go((phase) => {
      if (phase === 'messages') throw new Error('killed');
    }), /killed/);
    const midway = Number((await db('messages').where({ tenant_id: other.id }).count({ n: '*' }))[0]!.n);
    t.equal(midway, 2, 'one batch of messages committed');
    const result = await go();
    t.equal(result.counts.tickets, 0);
    t.equal(result.counts.messages + result.counts.notes, 19);
    t.equal(Number((await db('messages').where({ tenant_id: other.id }).count({ n: '*' }))[0]!.n), 21);
  });

  await t.test('a run cut while several batches are in flight resumes without duplicates or losses', async (t) => {
    const other = await tenantFixture(env);
    const count = async () => Number((await db('messages').where({ tenant_id: other.id }).count({ n: '*' }))[0]!.n);
    // Batches of 2 entries, 3 written side by side (the default): when the first one reports, the
    // others in flight still commit, and the entries after them do not.
    await t.rejects(runLegacyImport(env.deps, other.id, CLI_ACTOR, now, { source: source.dsn, batchSize: 2, onProgress: (phase) => {
      if (phase === 'messages') throw new Error('killed');
    } }), /killed/);
    const midway = await count();
    t.ok(midway >= 2 && midway <= 6 && midway % 2 === 0, `whole batches of the ones in flight committed (${midway})`);
    const result = await runLegacyImport(env.deps, other.id, CLI_ACTOR, now, { source: source.dsn, batchSize: 2 });
    t.equal(result.counts.tickets, 0);
    t.equal(result.counts.messages + result.counts.notes, 21 - midway, 'the rest, and only the rest');
    t.equal(result.skipped.messages + result.skipped.notes, midway);
    t.equal(await count(), 21, 'every thread entry once');
  });

  await t.test('two runs side by side import every row once', async (t) => {
    const third = await tenantFixture(env);
    const go = () => runLegacyImport(env.deps, third.id, CLI_ACTOR, now, { source: source.dsn, batchSize: 3 });
    const [x, y] = await Promise.all([go(), go()]);
    t.equal(x.counts.tickets + y.counts.tickets, 8);
    t.equal(x.counts.messages + y.counts.messages, 16);
    t.same([...x.errors, ...y.errors], []);
    t.equal(Number((await db('tickets').where({ tenant_id: third.id }).count({ n: '*' }))[0]!.n), 8);
    t.equal(Number((await db('messages').where({ tenant_id: third.id }).count({ n: '*' }))[0]!.n), 21);
  });

  t.same(env.guard.violations, [], 'every query of the import names its tenant');
});

t.test('a source that is not osTicket is refused with the reason', { skip: osticketMissing }, async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const empty = emptyMariaDb(t);
  const error = await runLegacyImport(env.deps, tenant.id, CLI_ACTOR, new Date(), { source: empty.dsn }).catch((e: unknown) => e);
  t.ok(error instanceof AppError);
  t.match(error, { code: 'validation_failed', message: /Not an osTicket schema/ });
  const unreachable = await runLegacyImport(env.deps, tenant.id, CLI_ACTOR, new Date(), { source: 'mysql://root@127.0.0.1:1/nothing' }).catch((e: unknown) => e);
  t.match(unreachable, { code: 'validation_failed', message: /unreachable/ });
  const notUrl = await runLegacyImport(env.deps, tenant.id, CLI_ACTOR, new Date(), { source: 'postgres://x/y' }).catch((e: unknown) => e);
  t.match(notUrl, { code: 'validation_failed' });
});
