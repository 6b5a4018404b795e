import t from 'tap';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { CLI_ACTOR, type Actor } from '../../../src/core/context.js';
import { uuidv7 } from '../../../src/core/ids.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { recordAudit } from '../../../src/audit/service.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';

const keys = licenseKeys();
const T0 = Date.parse('2026-03-01T12:00:00.000Z');

async function audit(env: TestEnv, tenantId: string, now: Date, action: string, extra: { actor?: Actor; resourceId?: string; resourceType?: string } = {}) {
  await inTransaction(env.deps, { tenantId, actor: extra.actor ?? CLI_ACTOR, now, requestId: 'req-1', ip: '203.0.113.9' }, (ctx) =>
    recordAudit(ctx, { action, resourceType: extra.resourceType ?? 'ticket', resourceId: extra.resourceId ?? null, changes: { n: action } }));
}

const dbOrder = (env: TestEnv, tenantId: string) =>
  env.deps.db('audit_log').where({ tenant_id: tenantId }).orderBy('created_at', 'desc').orderBy('id', 'desc').pluck('id');

t.test('GET /audit-log', async (t) => {
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem });
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  await grantLicense(env, other.id, keys);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const admin = tenant.admin.token;
  const agentActor: Actor = { type: 'user', userId: agent.id, name: 'Agent Smith', role: 'agent', apiKeyId: null, sessionId: null, scopes: [] };

  // Twelve rows in one millisecond (the id breaks the tie), then a spread over time.
  for (let i = 0; i < 12; i++) await audit(env, tenant.id, new Date(T0), 'ticket.updated', { resourceId: `t-${i}` });
  for (let i = 1; i <= 8; i++) await audit(env, tenant.id, new Date(T0 + i * 60_000), i % 2 ? 'ticket.created' : 'ticket.deleted', { actor: agentActor, resourceId: 'T-7' });
  // Rows that differ only in microseconds: a millisecond cursor would skip or repeat them.
  for (const us of ['123', '456', '789']) {
    await env.deps.db('audit_log').insert({
      tenant_id: tenant.id, id: uuidv7(T0 - 1000), actor_type: 'system', actor_name: 'System', action: 'job.ran',
      resource_type: 'job', changes: {}, created_at: env.deps.db.raw(`timestamptz '2026-03-01T11:59:59.000${us}Z'`),
    });
  }
  await audit(env, other.id, new Date(T0), 'secret.other.tenant');

  await t.test('entries newest first, in the documented shape', async (t) => {
    const res = await call(env, 'GET', '/audit-log', { token: admin, query: { page_size: '100' } });
    t.equal(res.statusCode, 200);
    const { data, meta } = res.json();
    t.same(data.map((e: { id: string }) => e.id), await dbOrder(env, tenant.id));
    t.same(meta, { page: 1, page_size: 100, total: data.length, next_cursor: null });
    const entry = data.find((e: { action: string }) => e.action === 'ticket.created');
    t.same(entry, {
      id: entry.id, action: 'ticket.created', actor: { type: 'user', id: agent.id, name: 'Agent Smith' }, resource_type: 'ticket',
      resource_id: 'T-7', changes: { n: 'ticket.created' }, ip: '203.0.113.9', request_id: 'req-1', created_at: new Date(T0 + 7 * 60_000).toISOString(),
    });
    t.notOk(res.body.includes('secret.other.tenant'), "no other tenant's entries");
  });

  await t.test('a cursor walk visits every row once, in order', async (t) => {
    const expected = await dbOrder(env, tenant.id);
    const seen: string[] = [];
    const first = await call(env, 'GET', '/audit-log', { token: admin, query: { page_size: '4' } });
    t.same(first.json().meta, { page: 1, page_size: 4, total: expected.length, next_cursor: first.json().meta.next_cursor });
    seen.push(...first.json().data.map((e: { id: string }) => e.id));
    let cursor: string | null = first.json().meta.next_cursor;
    // A row written during the walk is newer than the cursor: it neither shifts nor repeats rows.
    await audit(env, tenant.id, new Date(), 'written.during.walk');
    let pages = 1;
    while (cursor) {
      const res = await call(env, 'GET', '/audit-log', { token: admin, query: { page_size: '4', cursor } });
      t.equal(res.statusCode, 200);
      t.same(Object.keys(res.json().meta).sort(), ['next_cursor', 'page_size'], 'cursor form: no total');
      seen.push(...res.json().data.map((e: { id: string }) => e.id));
      cursor = res.json().meta.next_cursor;
      if (++pages > 20) break;
    }
    t.same(seen, expected, 'no duplicates, no gaps');
    t.equal(new Set(seen).size, seen.length);

    // Rows one microsecond-apart inside one millisecond, one per page: the cursor keeps the microseconds.
    const jobs: string[] = [];
    let jobCursor: string | null = '';
    while (jobCursor !== null && jobs.length < 10) {
      const res = await call(env, 'GET', '/audit-log', { token: admin, query: { resource_type: 'job', page_size: '1', cursor: jobCursor } });
      jobs.push(...res.json().data.map((e: { id: string }) => e.id));
      jobCursor = res.json().meta.next_cursor;
    }
    t.same(jobs, await env.deps.db('audit_log').where({ tenant_id: tenant.id, resource_type: 'job' }).orderBy('created_at', 'desc').pluck('id'));

    // An empty cursor starts a cursor walk at the newest row.
    const fresh = await call(env, 'GET', '/audit-log', { token: admin, query: { page_size: '2', cursor: '' } });
    t.equal(fresh.json().data[0].action, 'written.during.walk');
    t.type(fresh.json().meta.next_cursor, 'string');
  });

  await t.test('filters', async (t) => {
    const ids = (q: Record<string, string>) => call(env, 'GET', '/audit-log', { token: admin, query: { page_size: '100', ...q } }).then((r) => {
      t.equal(r.statusCode, 200, JSON.stringify(q));
      return r.json().data as Array<{ action: string; created_at: string; resource_id: string | null }>;
    });
    t.equal((await ids({ action: 'ticket.created' })).length, 4);
    t.equal((await ids({ actor_id: agent.id })).length, 8);
    t.equal((await ids({ resource_type: 'job' })).length, 3);
    t.same((await ids({ resource_id: 't-3' })).map((e) => e.resource_id), ['t-3']);
    const window = await ids({ from: new Date(T0 + 2 * 60_000).toISOString(), to: '2026-03-01T13:06:00+01:00' });
    t.same(window.map((e) => e.created_at), [5, 4, 3, 2].map((m) => new Date(T0 + m * 60_000).toISOString()), 'from inclusive, to exclusive');
    const combined = await call(env, 'GET', '/audit-log', { token: admin, query: { actor_id: agent.id, action: 'ticket.deleted', page_size: '2' } });
    t.same(combined.json().meta, { page: 1, page_size: 2, total: 4, next_cursor: combined.json().meta.next_cursor });
    const rest = await call(env, 'GET', '/audit-log', { token: admin, query: { actor_id: agent.id, action: 'ticket.deleted', page_size: '2', cursor: combined.json().meta.next_cursor } });
    t.equal(rest.json().data.length, 2);
    t.equal(rest.json().meta.next_cursor, null, 'filters apply to cursor pages too');
  });

  await t.test('bad queries are 422', async (t) => {
    const bad = await call(env, 'GET', '/audit-log', { token: admin, query: { actor_id: 'bob', from: 'yesterday', page_size: '101' } });
    t.equal(bad.statusCode, 422);
    t.same((bad.json().details as Array<{ field: string }>).map((d) => d.field).sort(), ['actor_id', 'from', 'page_size']);
    const reversed = await call(env, 'GET', '/audit-log', { token: admin, query: { from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' } });
    t.same(reversed.json().details, [{ field: 'to', message: 'must be later than from' }]);
    const forged = Buffer.from(JSON.stringify({ t: '1; drop table', i: 'x' })).toString('base64url');
    for (const cursor of ['not a cursor!', 'e30', forged, Buffer.from('nonsense').toString('base64url')]) {
      const res = await call(env, 'GET', '/audit-log', { token: admin, query: { cursor } });
      t.equal(res.statusCode, 422, cursor);
      t.same(res.json().details, [{ field: 'cursor', message: 'is invalid' }]);
    }
    const both = await call(env, 'GET', '/audit-log', { token: admin, query: { page: '2', cursor: 'e30' } });
    t.equal(both.statusCode, 422);
    t.same(both.json().details, [{ field: 'cursor', message: 'cannot be combined with page' }]);
  });

  await t.test('access', async (t) => {
    t.equal((await call(env, 'GET', '/audit-log')).statusCode, 401);
    for (const token of [agent.token, customer.token]) {
      const res = await call(env, 'GET', '/audit-log', { token });
      t.equal(res.statusCode, 403);
      t.same(res.json().details, { required_scope: 'audit_log:read' });
    }
    const community = await tenantFixture(env);
    const res = await call(env, 'GET', '/audit-log', { token: community.admin.token });
    t.equal(res.statusCode, 403);
    t.same({ code: res.json().code, details: res.json().details }, { code: 'feature_not_licensed', details: { feature: 'audit_log' } });
  });

  await t.test('the table is append-only', async (t) => {
    const before = await dbOrder(env, tenant.id);
    await t.rejects(env.deps.db('audit_log').where({ tenant_id: tenant.id }).update({ action: 'rewritten' }), /append-only/);
    await t.rejects(env.deps.db('audit_log').where({ tenant_id: tenant.id }).delete(), /append-only/);
    await t.rejects(env.deps.db.raw('truncate audit_log'), /append-only/);
    t.same(await dbOrder(env, tenant.id), before);
  });

  t.same(env.guard.violations.filter((sql) => !/truncate/i.test(sql)), [], 'every query was tenant-scoped');
});
