import t from 'tap';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { backdate, oldClosedTickets } from '../../helpers/archive-fixture.js';
import { openTicket } from '../../helpers/tickets.js';
import { runningArchives, setArchiveJobStarter, ticketArchiveJob } from '../../../src/archiver/runs.js';
import { runJob } from '../../../src/jobs/runner.js';
import { decodeFile } from '../../../src/archiver/parquet.js';

/**
 * The ticket archiver (CONTRACT §19) with the default kind of store (`file://`): the module gate,
 * a dry run, a run (Parquet files written, read back and verified, hot rows removed), status,
 * archived tickets read through the API with the desk's visibility, the merge rule, one run at a
 * time, and a batch that fails verification being written again.
 */
t.setTimeout(300_000);

t.test('archive closed tickets to Parquet files and read them back through the API', async (t) => {
  const keys = licenseKeys();
  const dir = mkdtempSync(join(tmpdir(), 'helpdesk-archive-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem, archiveUrl: `file://${dir}`, archiveBatchSize: 3 });
  const tenant = await tenantFixture(env);
  const admin = tenant.admin.token;
  const customer = await userFixture(env, tenant.id, 'customer');
  const stranger = await userFixture(env, tenant.id, 'customer');

  // Community: the module gate.
  let res = await call(env, 'POST', '/ticket-archiver/run', { token: admin, body: {} });
  t.equal(res.statusCode, 403);
  t.same(res.json().details, { feature: 'archiver' });
  await grantLicense(env, tenant.id, keys);
  const agent = await userFixture(env, tenant.id, 'agent');
  t.equal((await call(env, 'GET', '/ticket-archiver/status', { token: agent.token })).statusCode, 403, 'admins only');
  t.same((await call(env, 'GET', '/ticket-archiver/status', { token: admin })).json(), { archived_tickets: 0, last_run: null });
  for (const body of [{ older_than_days: 0 }, { older_than_days: 'x' }, { dry_run: true, extra: 1 }]) {
    t.equal((await call(env, 'POST', '/ticket-archiver/run', { token: admin, body })).statusCode, 422, JSON.stringify(body));
  }

  const old = await oldClosedTickets(env, tenant, customer.id, 7);
  const firstMessage = (await call(env, 'GET', `/tickets/${old[0]!.id}/messages`, { token: admin })).json().data[0];
  const attachment = await env.deps.db('attachments').where({ tenant_id: tenant.id, ticket_id: old[0]!.id }).first();
  const recent = await oldClosedTickets(env, tenant, customer.id, 1, 10);
  const open = await openTicket(env, admin, { requester_id: customer.id, subject: 'Still open' });
  await backdate(env, tenant.id, [open.id], 500); // closed_at set, but not closed: stays
  // A hot ticket merged into an old closed one keeps it hot.
  const target = (await oldClosedTickets(env, tenant, customer.id, 1))[0]!;
  await env.deps.db('tickets').where({ tenant_id: tenant.id, id: open.id }).update({ merged_into_id: target.id });

  // Dry run: counts, touches nothing.
  res = await call(env, 'POST', '/ticket-archiver/run', { token: admin, body: { dry_run: true } });
  t.equal(res.statusCode, 202);
  const dryId = res.json().run_id;
  await runningArchives();
  let status = (await call(env, 'GET', '/ticket-archiver/status', { token: admin })).json();
  t.match(status, { archived_tickets: 0, last_run: { run_id: dryId, status: 'completed', dry_run: true, older_than_days: 365, tickets: 7, bytes: 0, files: 0, error: null } });
  t.equal((await call(env, 'GET', `/tickets/${old[0]!.id}`, { token: admin })).json().archived, undefined, 'still hot');

  // The run.
  res = await call(env, 'POST', '/ticket-archiver/run', { token: admin, body: {} });
  t.equal(res.statusCode, 202);
  const runId = res.json().run_id;
  await runningArchives();
  status = (await call(env, 'GET', '/ticket-archiver/status', { token: admin })).json();
  t.match(status, { archived_tickets: 7, last_run: { run_id: runId, status: 'completed', dry_run: false, tickets: 7, files: 12, error: null } });
  t.ok(status.last_run.bytes > 0);
  t.ok(status.last_run.started_at && status.last_run.finished_at);

  const ids = old.map((x) => x.id);
  t.equal((await env.deps.db('tickets').where({ tenant_id: tenant.id }).whereIn('id', ids)).length, 0, 'hot ticket rows gone');
  t.equal((await env.deps.db('messages').where({ tenant_id: tenant.id }).whereIn('ticket_id', ids)).length, 0, 'their messages gone');
  t.equal((await env.deps.db('events').where({ tenant_id: tenant.id }).whereIn('ticket_id', ids)).length, 0, 'their events gone');
  for (const stay of [recent[0]!.id, open.id, target.id]) {
    t.equal((await env.deps.db('tickets').where({ tenant_id: tenant.id, id: stay })).length, 1, `${stay} stays hot`);
  }
  const batches = await env.deps.db('archive_batches').where({ tenant_id: tenant.id, run_id: runId });
  t.same(batches.map((b) => b.state), ['deleted', 'deleted', 'deleted']);
  t.same(batches.map((b) => b.ticket_ids.length), [3, 3, 1]);

  // The files: Parquet, under <tenant>/<run>/<batch>/, readable by any Parquet reader.
  const batchDirs = readdirSync(join(dir, tenant.id, runId));
  t.equal(batchDirs.length, 3);
  const ticketsFile = new Uint8Array(readFileSync(join(dir, tenant.id, runId, batches[0].id, 'tickets.parquet')));
  t.same([...ticketsFile.subarray(0, 4)], [...Buffer.from('PAR1')], 'Parquet magic');
  const rows = await decodeFile(ticketsFile);
  t.same(rows.map((r) => r.id), batches[0].ticket_ids.slice().sort((a: string, b: string) => (old.findIndex((o) => o.id === a) - old.findIndex((o) => o.id === b))));
  t.match(rows[0], { ticket_number: BigInt(old[0]!.ticket_number), subject: 'Old question 0', requester_id: customer.id });
  const messages = await decodeFile(new Uint8Array(readFileSync(join(dir, tenant.id, runId, batches[0].id, 'messages.parquet'))));
  t.equal(messages.length, 9, 'three messages per ticket');
  const refs = await decodeFile(new Uint8Array(readFileSync(join(dir, tenant.id, runId, batches[0].id, 'attachments.parquet'))));
  t.match(refs, [{ id: attachment.id, ticket_id: old[0]!.id, filename: 'invoice.txt', content_type: 'text/plain', size: 10n, storage_key: attachment.storage_key, sha256: attachment.sha256 }], 'attachment references');
  const events = await decodeFile(new Uint8Array(readFileSync(join(dir, tenant.id, runId, batches[0].id, 'events.parquet'))));
  t.ok(events.some((e) => e.type === 'ticket.created'), 'events travel too');

  // Reading: staff see the ticket and every message; the requester only public ones; others nothing.
  res = await call(env, 'GET', `/tickets/${old[0]!.id}`, { token: admin });
  t.equal(res.statusCode, 200);
  const archived = res.json();
  t.match(archived, { id: old[0]!.id, ticket_number: old[0]!.ticket_number, subject: 'Old question 0', archived: true, requester_id: customer.id });
  t.same(archived.messages.map((m: { body: string }) => m.body), ['Question body 0', 'Public answer 0', 'Private note 0']);
  t.equal(archived.messages[0].id, firstMessage.id);
  t.match(archived.messages[1].attachments, [{ id: attachment.id, filename: 'invoice.txt', content_type: 'text/plain', size: 10 }]);
  res = await call(env, 'GET', `/tickets/${old[0]!.id}`, { token: customer.token });
  t.equal(res.statusCode, 200);
  t.same(res.json().messages.map((m: { body: string }) => m.body), ['Question body 0', 'Public answer 0'], 'no private notes for the customer');
  res = await call(env, 'GET', `/tickets/${old[0]!.id}/messages`, { token: customer.token });
  t.equal(res.statusCode, 200);
  t.same(res.json().data.map((m: { body: string }) => m.body), ['Question body 0', 'Public answer 0']);
  t.equal(res.json().meta.next_cursor, null);
  t.equal((await call(env, 'GET', `/tickets/${old[0]!.id}`, { token: stranger.token })).statusCode, 404, "another customer's ticket");
  t.equal((await call(env, 'GET', `/tickets/${old[0]!.id}/messages`, { token: stranger.token })).statusCode, 404);
  t.equal((await call(env, 'GET', `/tickets/${old[0]!.id}`, { token: agent.token })).json().archived, true);
  const other = await tenantFixture(env);
  t.equal((await call(env, 'GET', `/tickets/${old[0]!.id}`, { token: other.admin.token })).statusCode, 404, 'another tenant');
  res = await call(env, 'PATCH', `/tickets/${old[0]!.id}`, { token: admin, body: { summary: 'x' } });
  t.equal(res.statusCode, 404, 'an archived ticket is read-only');
  // Hot tickets answer as before, without the archive's fields.
  t.notOk('archived' in (await call(env, 'GET', `/tickets/${recent[0]!.id}`, { token: admin })).json());

  // One run at a time per tenant.
  setArchiveJobStarter(null);
  t.teardown(() => setArchiveJobStarter((deps) => runJob(deps, 'ticket-archive')));
  res = await call(env, 'POST', '/ticket-archiver/run', { token: admin, body: { older_than_days: 5 } });
  t.equal(res.statusCode, 202);
  const queued = res.json().run_id;
  res = await call(env, 'POST', '/ticket-archiver/run', { token: admin, body: {} });
  t.equal(res.statusCode, 409);
  t.same(res.json().details, { run_id: queued });
  t.match((await call(env, 'GET', '/ticket-archiver/status', { token: admin })).json().last_run, { run_id: queued, status: 'queued', started_at: null });

  // A batch whose file does not verify goes back to writing; the run fails, the tickets stay hot.
  // (A manifest row as a process would have left it, whose files do not match what the store holds.)
  const [batchRow] = await env.deps.db('archive_batches').insert({
    tenant_id: tenant.id, id: '0190a1b2-0000-7000-8000-00000000beef', run_id: queued, state: 'written',
    ticket_ids: [recent[0]!.id], versions: '{}', bytes: 10,
    files: JSON.stringify(['tickets', 'messages', 'events', 'attachments'].map((kind) => ({ kind, key: `${tenant.id}/${queued}/bad/${kind}.parquet`, bytes: 4, sha256: '0'.repeat(64), rows: 1 }))),
    created_at: new Date(), updated_at: new Date(),
  }).returning('*');
  let out = await ticketArchiveJob(env.deps, new Date());
  t.same(out, { runs: 1, resumed: 0 });
  status = (await call(env, 'GET', '/ticket-archiver/status', { token: admin })).json();
  t.match(status.last_run, { run_id: queued, status: 'failed', error: /failed verification/ });
  t.equal((await env.deps.db('archive_batches').where({ tenant_id: tenant.id, id: batchRow.id }).first()).state, 'writing', 'back to writing');
  t.equal((await env.deps.db('tickets').where({ tenant_id: tenant.id, id: recent[0]!.id })).length, 1, 'still hot');
  // The next run finishes that batch first (written again, verified, removed), then its own work.
  res = await call(env, 'POST', '/ticket-archiver/run', { token: admin, body: { older_than_days: 5 } });
  t.equal(res.statusCode, 202);
  out = await ticketArchiveJob(env.deps, new Date());
  t.equal(out.runs, 1);
  t.equal((await env.deps.db('archive_batches').where({ tenant_id: tenant.id, id: batchRow.id }).first()).state, 'deleted');
  t.equal((await call(env, 'GET', `/tickets/${recent[0]!.id}`, { token: admin })).json().archived, true);
  status = (await call(env, 'GET', '/ticket-archiver/status', { token: admin })).json();
  t.equal(status.archived_tickets, 8, 'target stays hot: a hot ticket was merged into it');
  t.equal(status.last_run.status, 'completed');

  const audit = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'ticket_archiver.run_requested' });
  t.equal(audit.length, 4);
  t.same(env.guard.violations, [], 'every query was tenant-scoped');
});
