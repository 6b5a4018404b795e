import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { cliEnv } from '../../helpers/cli.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { oldClosedTickets } from '../../helpers/archive-fixture.js';
import { setArchiveJobStarter } from '../../../src/archiver/runs.js';
import { runJob } from '../../../src/jobs/runner.js';

/**
 * An archive run killed half-way (CONTRACT §19: resumable after a crash): the `ticket-archive` job
 * runs in a separate process (`helpdesk jobs run ticket-archive`), which is SIGKILLed while it is
 * moving batches; running the job again resumes the run from its manifest, and in the end every
 * ticket is archived exactly once, gone from the hot tables and readable through the API.
 */
t.setTimeout(600_000);
const ROOT = new URL('../../../', import.meta.url).pathname;
const TICKETS = 40;

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

t.test('kill the archiving process half-way, run again: every ticket archived once and readable', async (t) => {
  const keys = licenseKeys();
  const store = mkdtempSync(join(tmpdir(), 'helpdesk-archive-'));
  const dataDir = mkdtempSync(join(tmpdir(), 'helpdesk-archive-data-'));
  t.teardown(() => {
    rmSync(store, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem, archiveUrl: `file://${store}`, archiveBatchSize: 2 });
  const tenant = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  const customer = await userFixture(env, tenant.id, 'customer');
  const tickets = await oldClosedTickets(env, tenant, customer.id, TICKETS);
  const ids = tickets.map((x) => x.id);
  const archivedCount = async () => Number((await env.deps.db('archived_tickets').where({ tenant_id: tenant.id }).count({ n: '*' }))[0]!.n);

  // The run is queued here; only the other process works on it.
  setArchiveJobStarter(null);
  t.teardown(() => setArchiveJobStarter((deps) => runJob(deps, 'ticket-archive')));
  const res = await call(env, 'POST', '/ticket-archiver/run', { token: tenant.admin.token, body: {} });
  t.equal(res.statusCode, 202);
  const runId = res.json().run_id;

  const child = spawn(process.execPath, ['--import', 'tsx', '--no-warnings', join(ROOT, 'bin', 'dev.js'), 'jobs', 'run', 'ticket-archive', '--json'], {
    cwd: ROOT,
    env: cliEnv({
      DATABASE_URL: env.databaseUrl, HELPDESK_DATA_DIR: dataDir, HELPDESK_SECRET_KEY: 'test-secret-key', LOG_LEVEL: 'silent',
      HELPDESK_ARCHIVE_URL: `file://${store}`, HELPDESK_ARCHIVE_BATCH_SIZE: '2',
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c));
  child.stderr.on('data', (c: Buffer) => (output += c));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));

  // Wait until some batches are done, then prefer a moment when one is half-way (not yet deleted).
  let killedIn = 'between batches';
  const deadline = Date.now() + 180_000;
  let firstSeen = 0;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`the archiving process made no progress: ${output}`);
    if (child.exitCode !== null) throw new Error(`the archiving process finished before it could be killed (${output}); make the run longer`);
    const n = await archivedCount();
    if (n >= 4) {
      firstSeen ||= Date.now();
      const open = await env.deps.db('archive_batches').where({ tenant_id: tenant.id }).whereNot('state', 'deleted').first('state');
      if (open || Date.now() - firstSeen > 300) {
        killedIn = open ? `a batch in state ${open.state}` : killedIn;
        child.kill('SIGKILL');
        break;
      }
    }
    await sleep(5);
  }
  t.equal(await exited, 'SIGKILL', 'the process was killed');
  t.comment(`killed with ${await archivedCount()} of ${TICKETS} tickets archived, in ${killedIn}`);

  const half = await archivedCount();
  t.ok(half > 0 && half < TICKETS, `half-way: ${half} of ${TICKETS}`);
  t.equal((await env.deps.db('archive_runs').where({ tenant_id: tenant.id, id: runId }).first()).status, 'running', 'the run was left running');

  // Run the job again: it claims the abandoned run and resumes it.
  const again = await runJob(env.deps, 'ticket-archive');
  t.equal(again.status, 'succeeded', again.error ?? '');
  t.same(again.result, { runs: 1, resumed: 1 });

  const run = await env.deps.db('archive_runs').where({ tenant_id: tenant.id, id: runId }).first();
  t.match(run, { status: 'completed', tickets: TICKETS, error: null });
  t.ok(run.attempts >= 2);

  // Exactly once: one archived_tickets row per ticket, each ticket in exactly one batch, no hot row left.
  const archived = await env.deps.db('archived_tickets').where({ tenant_id: tenant.id }).select('ticket_id');
  t.same(archived.map((r) => r.ticket_id).sort(), [...ids].sort());
  const inBatches = await env.deps.db.raw('SELECT unnest(ticket_ids) AS id FROM archive_batches WHERE tenant_id = ?', [tenant.id]);
  t.equal(inBatches.rows.length, TICKETS, 'no ticket in two batches');
  t.same(inBatches.rows.map((r: { id: string }) => r.id).sort(), [...ids].sort());
  const batches = await env.deps.db('archive_batches').where({ tenant_id: tenant.id });
  t.ok(batches.every((b) => b.state === 'deleted'), 'every batch finished');
  t.equal((await env.deps.db('tickets').where({ tenant_id: tenant.id }).whereIn('id', ids)).length, 0, 'no hot ticket left');
  t.equal((await env.deps.db('messages').where({ tenant_id: tenant.id }).whereIn('ticket_id', ids)).length, 0, 'no hot message left');

  // The store holds the files of each batch once, and nothing half-written.
  const stored = files(store);
  t.equal(stored.length, batches.length * 4);
  t.notOk(stored.some((f) => f.endsWith('.partial')), 'no partial files');

  // Every ticket reads back through the API.
  for (const ticket of tickets) {
    const got = await call(env, 'GET', `/tickets/${ticket.id}`, { token: tenant.admin.token });
    t.equal(got.statusCode, 200);
    t.match(got.json(), { id: ticket.id, ticket_number: ticket.ticket_number, subject: ticket.subject, archived: true });
    t.equal(got.json().messages.length, 3, `${ticket.subject}: its messages`);
  }
  const status = (await call(env, 'GET', '/ticket-archiver/status', { token: tenant.admin.token })).json();
  t.match(status, { archived_tickets: TICKETS, last_run: { run_id: runId, status: 'completed', tickets: TICKETS, files: batches.length * 4 } });
});
