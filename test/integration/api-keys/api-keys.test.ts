import t from 'tap';
import { apiKeyFixture, call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { sha256Hex } from '../../../src/core/crypto.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';

const keys = licenseKeys();

const keyCount = async (env: TestEnv, tenantId: string) => Number((await env.deps.db('api_keys').where({ tenant_id: tenantId }).count({ n: '*' }))[0]!.n);

t.test('API keys', async (t) => {
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem });
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  await grantLicense(env, other.id, keys);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const admin = tenant.admin.token;
  let created: { id: string; key: string } = { id: '', key: '' };

  await t.test('POST /api-keys issues a key shown once', async (t) => {
    const expiresAt = new Date(Date.now() + 30 * 86_400_000);
    const res = await call(env, 'POST', '/api-keys', {
      token: admin, body: { name: ' CI pipeline ', scopes: ['tickets:read', 'users:read', 'tickets:read'], expires_at: expiresAt.toISOString().replace('Z', '+00:00') },
    });
    t.equal(res.statusCode, 201);
    const body = res.json();
    t.same(Object.keys(body).sort(), ['created_at', 'expires_at', 'id', 'key', 'last4', 'name', 'prefix', 'scopes']);
    t.match(body, { name: 'CI pipeline', scopes: ['tickets:read', 'users:read'], expires_at: expiresAt.toISOString() });
    t.match(body.key, /^hdk_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    t.equal(body.key.slice(4, 12), body.prefix);
    t.equal(body.key.slice(-4), body.last4);
    created = body;

    const row = await env.deps.db('api_keys').where({ tenant_id: tenant.id, id: body.id }).first();
    t.equal(row.token_hash, sha256Hex(body.key), 'stored as a hash');
    t.equal(row.user_id, tenant.admin.id, 'owned by the caller');
    t.notOk(JSON.stringify(row).includes(body.key), 'the key itself is stored nowhere');
    const [audit] = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'api_key.created', resource_id: body.id });
    t.match(audit.changes, { name: 'CI pipeline', scopes: ['tickets:read', 'users:read'], prefix: body.prefix });
    t.notOk(JSON.stringify(audit).includes(body.key), 'never audited');

    const use = await call(env, 'GET', '/users', { token: body.key });
    t.equal(use.statusCode, 200, 'the key works for its scopes');
    const beyond = await call(env, 'GET', '/api-keys', { token: body.key });
    t.equal(beyond.statusCode, 403);
    t.same(beyond.json().details, { required_scope: 'api_keys:read' });
  });

  await t.test('POST /api-keys refuses bad input with one detail per problem', async (t) => {
    const before = await keyCount(env, tenant.id);
    const schema = await call(env, 'POST', '/api-keys', { token: admin, body: { name: '', scopes: [], expires_at: 'tomorrow', owner: 'me' } });
    t.equal(schema.statusCode, 422);
    t.same((schema.json().details as Array<{ field: string }>).map((d) => d.field).sort(), ['expires_at', 'name', 'owner', 'scopes']);
    const missing = await call(env, 'POST', '/api-keys', { token: admin, body: {} });
    t.same((missing.json().details as Array<{ field: string }>).map((d) => d.field).sort(), ['name', 'scopes']);
    const unknown = await call(env, 'POST', '/api-keys', {
      token: admin, body: { name: 'k', scopes: ['tickets:read', 'tickets:*', 'tickets:fly', 'root'], expires_at: new Date(Date.now() - 1000).toISOString() },
    });
    t.equal(unknown.statusCode, 422);
    t.same(unknown.json().details, [
      { field: 'scopes.2', message: 'is not a known scope: tickets:fly' },
      { field: 'scopes.3', message: 'is not a known scope: root' },
      { field: 'expires_at', message: 'must be in the future' },
    ]);
    t.equal(await keyCount(env, tenant.id), before, 'nothing written');
  });

  await t.test('a caller may not grant scopes it does not hold', async (t) => {
    const narrow = (await apiKeyFixture(env, tenant.id, tenant.admin.id, ['api_keys:write', 'tickets:*'])).key;
    const ok = await call(env, 'POST', '/api-keys', { token: narrow, body: { name: 'sub', scopes: ['tickets:read'] } });
    t.equal(ok.statusCode, 201);
    const before = await keyCount(env, tenant.id);
    const refused = await call(env, 'POST', '/api-keys', { token: narrow, body: { name: 'wider', scopes: ['tickets:write', 'users:read', 'admin'] } });
    t.equal(refused.statusCode, 403);
    t.equal(refused.json().code, 'insufficient_scope');
    t.same(refused.json().details, { required_scope: 'users:read' });
    t.equal(await keyCount(env, tenant.id), before);
    const admins = await call(env, 'POST', '/api-keys', { token: admin, body: { name: 'full', scopes: ['admin'] } });
    t.equal(admins.statusCode, 201, 'an admin may issue an admin key');
  });

  await t.test('roles and scopes', async (t) => {
    t.equal((await call(env, 'POST', '/api-keys', { body: { name: 'k', scopes: ['tickets:read'] } })).statusCode, 401);
    for (const token of [agent.token, customer.token]) {
      const list = await call(env, 'GET', '/api-keys', { token });
      t.equal(list.statusCode, 403);
      t.equal(list.json().code, 'insufficient_scope');
      t.equal((await call(env, 'POST', '/api-keys', { token, body: { name: 'k', scopes: ['tickets:read'] } })).statusCode, 403);
      t.equal((await call(env, 'DELETE', `/api-keys/${created.id}`, { token })).statusCode, 403);
    }
  });

  await t.test('GET /api-keys lists without secrets; revoked ones on request', async (t) => {
    const res = await call(env, 'GET', '/api-keys', { token: admin, query: { page_size: '100' } });
    t.equal(res.statusCode, 200);
    const { data, meta } = res.json();
    t.same(meta, { page: 1, page_size: 100, total: data.length });
    const mine = data.find((k: { id: string }) => k.id === created.id);
    t.same(Object.keys(mine).sort(), ['created_at', 'expires_at', 'id', 'last4', 'last_used_at', 'name', 'prefix', 'revoked_at', 'scopes', 'user_id']);
    t.match(mine, { name: 'CI pipeline', user_id: tenant.admin.id, revoked_at: null });
    t.match(mine.last_used_at, /Z$/, 'the key was used above');
    t.notOk(res.body.includes(created.key));
    t.notOk(res.body.includes('token_hash'));
    const ids = data.map((k: { id: string }) => k.id);
    t.same(ids, [...ids].sort().reverse(), 'newest first');
    const otherKeys = await env.deps.db('api_keys').where({ tenant_id: other.id }).pluck('id');
    t.same(ids.filter((id: string) => otherKeys.includes(id)), [], "no other tenant's keys");
    const paged = await call(env, 'GET', '/api-keys', { token: admin, query: { page_size: '1', page: '2' } });
    t.same(paged.json().data.map((k: { id: string }) => k.id), [ids[1]]);
    t.equal((await call(env, 'GET', '/api-keys', { token: admin, query: { page_size: '500' } })).statusCode, 422);
  });

  await t.test('DELETE /api-keys/:id revokes, idempotently', async (t) => {
    const res = await call(env, 'DELETE', `/api-keys/${created.id}`, { token: admin });
    t.equal(res.statusCode, 204);
    t.equal(res.body, '');
    const use = await call(env, 'GET', '/users', { token: created.key });
    t.equal(use.statusCode, 401, 'a revoked key is refused');
    t.equal(use.json().code, 'unauthenticated');
    const row = await env.deps.db('api_keys').where({ tenant_id: tenant.id, id: created.id }).first();
    t.ok(row.revoked_at);
    t.equal((await call(env, 'DELETE', `/api-keys/${created.id}`, { token: admin })).statusCode, 204, 'again: still 204');
    t.equal((await env.deps.db('api_keys').where({ tenant_id: tenant.id, id: created.id }).first()).revoked_at.getTime(), row.revoked_at.getTime(), 'first revocation time kept');
    t.equal((await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'api_key.revoked', resource_id: created.id })).length, 1, 'audited once');

    const listed = await call(env, 'GET', '/api-keys', { token: admin, query: { page_size: '100' } });
    t.notOk(listed.json().data.some((k: { id: string }) => k.id === created.id), 'revoked keys are hidden by default');
    const all = await call(env, 'GET', '/api-keys', { token: admin, query: { page_size: '100', include_revoked: 'true' } });
    t.match(all.json().data.find((k: { id: string }) => k.id === created.id), { revoked_at: row.revoked_at.toISOString() });

    for (const id of ['0190a1b2-0000-7000-8000-0000000000aa', 'abc']) {
      const missing = await call(env, 'DELETE', `/api-keys/${id}`, { token: admin });
      t.equal(missing.statusCode, 404, id);
      t.equal(missing.json().code, 'resource_not_found');
    }
    const foreign = (await apiKeyFixture(env, other.id, other.admin.id, ['users:read'])).key;
    const foreignId = (await env.deps.db('api_keys').where({ tenant_id: other.id, token_hash: sha256Hex(foreign) }).first()).id;
    t.equal((await call(env, 'DELETE', `/api-keys/${foreignId}`, { token: admin })).statusCode, 404, "another tenant's key");
    t.equal((await call(env, 'GET', '/users', { token: foreign })).statusCode, 200, 'and it still works');
  });

  await t.test('an expired key is refused', async (t) => {
    const expired = (await apiKeyFixture(env, tenant.id, tenant.admin.id, ['users:read'], new Date(Date.now() - 1000))).key;
    t.equal((await call(env, 'GET', '/users', { token: expired })).statusCode, 401);
  });

  await t.test('Community tenants may list and revoke, not issue', async (t) => {
    const community = await tenantFixture(env);
    const res = await call(env, 'POST', '/api-keys', { token: community.admin.token, body: { name: 'k', scopes: ['tickets:read'] } });
    t.equal(res.statusCode, 403);
    t.same({ code: res.json().code, details: res.json().details }, { code: 'feature_not_licensed', details: { feature: 'api_keys' } });
    const list = await call(env, 'GET', '/api-keys', { token: community.admin.token });
    t.equal(list.statusCode, 200);
    t.equal(list.json().meta.total, 1, 'the provisioning key');
    const provisioning = list.json().data[0].id;
    t.equal((await call(env, 'DELETE', `/api-keys/${provisioning}`, { token: community.admin.token })).statusCode, 204);
    t.equal((await call(env, 'GET', '/users', { token: community.apiKey })).statusCode, 401);
  });

  t.same(env.guard.violations, [], 'every query was tenant-scoped');
});
