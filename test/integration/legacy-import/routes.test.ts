import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { emptyMariaDb, osticketDb, osticketMissing } from '../../helpers/osticket.js';
import { runningImports } from '../../../src/legacy-import/runs.js';
import { runLegacyImport } from '../../../src/legacy-import/writer.js';
import { runJob } from '../../../src/jobs/runner.js';
import { CLI_ACTOR } from '../../../src/core/context.js';
import { uuidv7 } from '../../../src/core/ids.js';

t.test('/legacy-import', { skip: osticketMissing }, async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const source = osticketDb(t);
  const empty = emptyMariaDb(t);
  const admin = tenant.admin.token;

  await t.test('test-connection answers the version and counts, or 422 with the reason', async (t) => {
    const ok = await call(env, 'POST', '/legacy-import/test-connection', { token: admin, body: { source: source.dsn } });
    t.equal(ok.statusCode, 200, ok.body);
    t.match(ok.json(), { ok: true, version: '1.18', counts: { tickets: 8, agents: 3, customers: 5, thread_entries: 22, attachments: 1 } });
    const notOst = await call(env, 'POST', '/legacy-import/test-connection', { token: admin, body: { source: empty.dsn } });
    t.equal(notOst.statusCode, 422);
    t.match(notOst.json(), { code: 'validation_failed', details: [{ field: 'source', message: /Not an osTicket schema/ }] });
    const bad = await call(env, 'POST', '/legacy-import/test-connection', { token: admin, body: { source: 'not a url' } });
    t.equal(bad.statusCode, 422);
    const forbidden = await call(env, 'POST', '/legacy-import/test-connection', { token: agent.token, body: { source: source.dsn } });
    t.equal(forbidden.statusCode, 403);
  });

  await t.test('an import runs in the background and reports its result', async (t) => {
    const queued = await call(env, 'POST', '/legacy-import', { token: admin, body: { source: source.dsn } });
    t.equal(queued.statusCode, 202, queued.body);
    t.match(queued.json(), { id: /^[0-9a-f-]{36}$/, status: 'queued' });
    await runningImports();
    const status = await call(env, 'GET', `/legacy-import/${queued.json().id}`, { token: admin });
    t.equal(status.statusCode, 200);
    t.match(status.json(), { status: 'completed', dry_run: false, counts: { tickets: 8, messages: 16, notes: 5, attachments: 1 }, errors: [] });
    t.match(status.json().started_at, /^\d{4}-/);
    t.notMatch(status.json().source, /secret/);
    t.equal(await env.deps.db('webhook_deliveries').where({ tenant_id: tenant.id }).count({ n: '*' }).then((r) => Number(r[0]!.n)), 0);

    const again = await call(env, 'POST', '/legacy-import', { token: admin, body: { source: source.dsn, dry_run: true } });
    await runningImports();
    t.match((await call(env, 'GET', `/legacy-import/${again.json().id}`, { token: admin })).json(), { status: 'completed', dry_run: true, counts: { tickets: 0 }, skipped: { tickets: 8 } });

    const otherTenant = await call(env, 'GET', `/legacy-import/${queued.json().id}`, { token: other.admin.token });
    t.equal(otherTenant.statusCode, 404, "another tenant's run is not found");
  });

  await t.test('the job claims queued runs with SKIP LOCKED and resumes a run whose process died', async (t) => {
    const third = await tenantFixture(env);
    const db = env.deps.db;
    const count = async (table: string) => Number((await db(table).where({ tenant_id: third.id }).count({ n: '*' }))[0]!.n);
    // A daemon claimed this run and died while importing messages: the tickets and the first batch
    // of messages are committed, the row still says `running`.
    await t.rejects(runLegacyImport(env.deps, third.id, CLI_ACTOR, new Date(), { source: source.dsn, batchSize: 2, parallel: 1, onProgress: (phase) => {
      if (phase === 'messages') throw new Error('killed');
    } }), /killed/);
    t.equal(await count('messages'), 2);
    const id = uuidv7();
    const row = {
      tenant_id: third.id, id, source: 'mysql://root@127.0.0.1/x', source_enc: env.deps.box.encrypt(source.dsn), source_timezone: 'UTC',
      dry_run: false, status: 'running', started_at: new Date(), created_at: new Date(), attempts: 1,
    };
    await db('legacy_imports').insert(row);

    // While another transaction holds the row, the job skips it and leaves it as it is.
    const holder = await db.transaction();
    await holder('legacy_imports').where({ tenant_id: third.id, id }).forUpdate();
    const skipped = await runJob(env.deps, 'legacy-import');
    await holder.rollback();
    t.match(skipped, { status: 'succeeded', result: { runs: 0 } });
    t.match(await db('legacy_imports').where({ id }).first(), { status: 'running', attempts: 1 });

    const resumed = await runJob(env.deps, 'legacy-import');
    t.match(resumed, { status: 'succeeded', result: { runs: 1, resumed: 1 } });
    const status = (await call(env, 'GET', `/legacy-import/${id}`, { token: third.admin.token })).json();
    t.match(status, { status: 'completed', phase: null, counts: { tickets: 0, messages: 14, notes: 5 }, skipped: { tickets: 8 }, errors: [] });
    t.equal(await count('tickets'), 8, 'every ticket once');
    t.equal(await count('messages'), 21, 'every thread entry once');
    const stored = await db('legacy_imports').where({ id }).first();
    t.equal(stored.source_enc, null, 'the stored source is dropped when the run ends');
    t.equal(stored.attempts, 2);
  });

  await t.test('the status shows progress while the job runs', async (t) => {
    const fourth = await tenantFixture(env);
    const queued = await call(env, 'POST', '/legacy-import', { token: fourth.admin.token, body: { source: source.dsn } });
    const id = queued.json().id;
    const seen = new Set<string>();
    while (seen.size === 0 || ![...seen].some((s) => s === 'completed')) {
      const now = (await call(env, 'GET', `/legacy-import/${id}`, { token: fourth.admin.token })).json();
      seen.add(now.status);
      if (now.status === 'running') t.ok(now.phase === null || typeof now.phase === 'string');
      if (now.status === 'completed') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await runningImports();
    t.ok(seen.has('completed'));
    t.ok(Number((await env.deps.db('job_runs').where({ name: 'legacy-import' }).count({ n: '*' }))[0]!.n) > 0, 'ran as the legacy-import job');
  });

  await t.test('a run against a source that is not osTicket fails with the reason', async (t) => {
    const queued = await call(env, 'POST', '/legacy-import', { token: admin, body: { source: empty.dsn } });
    t.equal(queued.statusCode, 202);
    await runningImports();
    t.match((await call(env, 'GET', `/legacy-import/${queued.json().id}`, { token: admin })).json(), { status: 'failed', errors: [{ kind: 'source', message: /Not an osTicket schema/ }] });
    const badTz = await call(env, 'POST', '/legacy-import', { token: admin, body: { source: source.dsn, source_timezone: 'Mars/Olympus' } });
    t.equal(badTz.statusCode, 422);
    t.equal((await call(env, 'POST', '/legacy-import', { token: admin, body: { source: 'http://x/y' } })).statusCode, 422);
    t.equal((await call(env, 'POST', '/legacy-import', { token: admin, body: { source: source.dsn, extra: 1 } })).statusCode, 422);
  });
});
