import t from 'tap';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { grantLicense, licenseKeys, storeLicenseRow } from '../../helpers/license.js';

const keys = licenseKeys();

const staffCount = async (env: TestEnv, tenantId: string) =>
  Number((await env.deps.db('users').where({ tenant_id: tenantId, active: true }).whereIn('role', ['admin', 'agent']).count({ n: '*' }))[0]!.n);

t.test('agent seats', async (t) => {
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem });

  await t.test('Community, no quota: unbounded', async (t) => {
    const tenant = await tenantFixture(env);
    const res = await call(env, 'GET', '/users/seats', { token: tenant.admin.token });
    t.equal(res.statusCode, 200);
    t.same(res.json(), { used: 1, licensed: null, quota: null, limit: null, available: null });
    const quota = await call(env, 'GET', '/users/instance-seat-quota', { token: tenant.admin.token });
    t.same(quota.json(), { quota: null });
    for (let i = 0; i < 3; i++) {
      t.equal((await call(env, 'POST', '/users', { token: tenant.admin.token, body: { email: `a${i}@example.com`, name: `Agent ${i}`, role: 'agent' } })).statusCode, 201);
    }
    t.same((await call(env, 'GET', '/users/seats', { token: tenant.admin.token })).json(), { used: 4, licensed: null, quota: null, limit: null, available: null });
  });

  await t.test('instance seat quota: read, set, audit, refusals', async (t) => {
    const tenant = await tenantFixture(env);
    const agent = await userFixture(env, tenant.id, 'agent');
    const set = await call(env, 'PUT', '/users/instance-seat-quota', { token: tenant.admin.token, body: { quota: 2 } });
    t.equal(set.statusCode, 200);
    t.same(set.json(), { quota: 2 });
    t.same((await call(env, 'GET', '/users/instance-seat-quota', { token: tenant.admin.token })).json(), { quota: 2 });
    const [audit] = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'tenant.seat_quota_updated' });
    t.match(audit, { resource_type: 'tenant', resource_id: tenant.id, changes: { seat_quota: { from: null, to: 2 } } });

    for (const body of [{ quota: -1 }, { quota: 1.5 }, { quota: 'ten' }, {}, { quota: 3, extra: true }]) {
      const res = await call(env, 'PUT', '/users/instance-seat-quota', { token: tenant.admin.token, body });
      t.equal(res.statusCode, 422, JSON.stringify(body));
    }
    const byAgent = await call(env, 'PUT', '/users/instance-seat-quota', { token: agent.token, body: { quota: 100 } });
    t.equal(byAgent.statusCode, 403);
    t.equal(byAgent.json().code, 'forbidden');
    t.equal((await call(env, 'GET', '/users/seats', { token: agent.token })).statusCode, 403, 'seats need users:write');
    t.equal((await call(env, 'GET', '/users/instance-seat-quota')).statusCode, 401);
    t.equal((await env.deps.db('tenants').where({ id: tenant.id }).first()).seat_quota, 2, 'refusals changed nothing');

    // Lowering below current use is allowed: it blocks new seats only.
    const low = await call(env, 'PUT', '/users/instance-seat-quota', { token: tenant.admin.token, body: { quota: 1 } });
    t.equal(low.statusCode, 200);
    t.same((await call(env, 'GET', '/users/seats', { token: tenant.admin.token })).json(), { used: 2, licensed: null, quota: 1, limit: 1, available: 0 });
    const cleared = await call(env, 'PUT', '/users/instance-seat-quota', { token: tenant.admin.token, body: { quota: null } });
    t.same(cleared.json(), { quota: null });
  });

  await t.test('a full quota refuses every way of taking a seat, and writes nothing', async (t) => {
    const tenant = await tenantFixture(env);
    const agent = await userFixture(env, tenant.id, 'agent');
    const customer = await userFixture(env, tenant.id, 'customer');
    await call(env, 'PUT', '/users/instance-seat-quota', { token: tenant.admin.token, body: { quota: 2 } });
    const seatError = { code: 'conflict', message: 'No agent seat available', details: { reason: 'seat_limit_reached', limit: 2, used: 2 } };

    const create = await call(env, 'POST', '/users', { token: tenant.admin.token, body: { email: 'third@example.com', name: 'Third', role: 'agent' } });
    t.equal(create.statusCode, 409);
    t.match(create.json(), seatError);
    t.notOk(await env.deps.db('users').where({ tenant_id: tenant.id, email: 'third@example.com' }).first());
    const createAdmin = await call(env, 'POST', '/users', { token: tenant.admin.token, body: { email: 'boss@example.com', name: 'Boss', role: 'admin' } });
    t.equal(createAdmin.statusCode, 409);
    t.equal((await call(env, 'POST', '/users', { token: tenant.admin.token, body: { email: 'cust@example.com', name: 'Cust' } })).statusCode, 201, 'customers need no seat');

    const promote = await call(env, 'PATCH', `/users/${customer.id}/role`, { token: tenant.admin.token, body: { role: 'agent' } });
    t.equal(promote.statusCode, 409);
    t.match(promote.json(), seatError);
    t.equal((await env.deps.db('users').where({ tenant_id: tenant.id, id: customer.id }).first()).role, 'customer');
    t.equal((await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'user.role_changed' })).length, 0);

    // agent <-> admin keeps the seat count: allowed when full.
    t.equal((await call(env, 'PATCH', `/users/${agent.id}/role`, { token: tenant.admin.token, body: { role: 'admin' } })).statusCode, 200);
    t.equal((await call(env, 'PATCH', `/users/${agent.id}/role`, { token: tenant.admin.token, body: { role: 'agent' } })).statusCode, 200);

    // Deactivating frees a seat; re-activating needs one.
    t.equal((await call(env, 'PATCH', `/users/${agent.id}`, { token: tenant.admin.token, body: { active: false } })).statusCode, 200);
    t.equal((await call(env, 'PATCH', `/users/${customer.id}/role`, { token: tenant.admin.token, body: { role: 'agent' } })).statusCode, 200, 'the freed seat is taken');
    const reactivate = await call(env, 'PATCH', `/users/${agent.id}`, { token: tenant.admin.token, body: { active: true } });
    t.equal(reactivate.statusCode, 409);
    t.match(reactivate.json(), seatError);
    t.equal((await env.deps.db('users').where({ tenant_id: tenant.id, id: agent.id }).first()).active, false);
    t.equal(await staffCount(env, tenant.id), 2);
  });

  await t.test('licence seats and quota: the lower bound wins', async (t) => {
    const tenant = await tenantFixture(env);
    await grantLicense(env, tenant.id, keys, { seats: 3 });
    const seats = () => call(env, 'GET', '/users/seats', { token: tenant.admin.token }).then((r) => r.json());
    t.same(await seats(), { used: 1, licensed: 3, quota: null, limit: 3, available: 2 });
    await call(env, 'PUT', '/users/instance-seat-quota', { token: tenant.admin.token, body: { quota: 5 } });
    t.same(await seats(), { used: 1, licensed: 3, quota: 5, limit: 3, available: 2 });
    await call(env, 'PUT', '/users/instance-seat-quota', { token: tenant.admin.token, body: { quota: 2 } });
    t.same(await seats(), { used: 1, licensed: 3, quota: 2, limit: 2, available: 1 });
    await call(env, 'PUT', '/users/instance-seat-quota', { token: tenant.admin.token, body: { quota: null } });

    for (const i of [1, 2]) {
      t.equal((await call(env, 'POST', '/users', { token: tenant.admin.token, body: { email: `l${i}@example.com`, name: `L${i}`, role: 'agent' } })).statusCode, 201);
    }
    const full = await call(env, 'POST', '/users', { token: tenant.admin.token, body: { email: 'l3@example.com', name: 'L3', role: 'agent' } });
    t.equal(full.statusCode, 409);
    t.same(full.json().details, { reason: 'seat_limit_reached', limit: 3, used: 3 });

    // An expired licence no longer bounds (nor grants) anything: Community has no seat limit.
    const past = new Date(Date.now() - 1000);
    await storeLicenseRow(env, tenant.id, { license_id: 'old', seats: 1, expires_at: past });
    t.same(await seats(), { used: 3, licensed: null, quota: null, limit: null, available: null });
  });

  await t.test('concurrent promotions cannot exceed the limit', async (t) => {
    const tenant = await tenantFixture(env);
    await call(env, 'PUT', '/users/instance-seat-quota', { token: tenant.admin.token, body: { quota: 2 } });
    for (let round = 0; round < 3; round++) {
      const a = await userFixture(env, tenant.id, 'customer');
      const b = await userFixture(env, tenant.id, 'customer');
      const results = await Promise.all([a, b].map((u) =>
        call(env, 'PATCH', `/users/${u.id}/role`, { token: tenant.admin.token, body: { role: 'agent' } })));
      t.same(results.map((r) => r.statusCode).sort(), [200, 409], `round ${round}: exactly one wins`);
      t.equal(await staffCount(env, tenant.id), 2);
      // Free the seat again for the next round.
      const winner = results[0]!.statusCode === 200 ? a : b;
      t.equal((await call(env, 'PATCH', `/users/${winner.id}/role`, { token: tenant.admin.token, body: { role: 'customer' } })).statusCode, 200);
    }
    const creates = await Promise.all([1, 2].map((i) =>
      call(env, 'POST', '/users', { token: tenant.admin.token, body: { email: `race${i}@example.com`, name: `Race ${i}`, role: 'agent' } })));
    t.same(creates.map((r) => r.statusCode).sort(), [201, 409], 'concurrent creations too');
    t.equal(await staffCount(env, tenant.id), 2);
  });

  t.same(env.guard.violations, [], 'every query was tenant-scoped');
});
