import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { emptyMariaDb, osticketDb, osticketMissing } from '../../helpers/osticket.js';
import { runningImports } from '../../../src/legacy-import/runs.js';

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
