import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { licenseKeys, licensePayload, signLicense, storeLicenseRow } from '../../helpers/license.js';

const keys = licenseKeys();
const NO_FEATURES = { api_keys: false, audit_log: false, webhook_endpoints: false, reporting: false, meetings: false, bi: false, rbac: false, archiver: false };

t.test('licence status and installation', async (t) => {
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem });
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const admin = tenant.admin.token;

  await t.test('without a licence the tenant is Community', async (t) => {
    const res = await call(env, 'GET', '/license', { token: admin });
    t.equal(res.statusCode, 200);
    t.same(res.json(), {
      edition: 'community', status: 'none', license_id: null, customer: null, modules: [], seats: null,
      issued_at: null, expires_at: null, installed_at: null, features: NO_FEATURES,
    });
    const apiKey = await call(env, 'POST', '/api-keys', { token: admin, body: { name: 'k', scopes: ['tickets:read'] } });
    t.equal(apiKey.statusCode, 403);
    t.same({ code: apiKey.json().code, details: apiKey.json().details }, { code: 'feature_not_licensed', details: { feature: 'api_keys' } });
    const audit = await call(env, 'GET', '/audit-log', { token: admin });
    t.equal(audit.statusCode, 403);
    t.same(audit.json().details, { feature: 'audit_log' });
  });

  await t.test('POST /license installs a valid licence', async (t) => {
    const payload = licensePayload({ license_id: 'LIC-42', seats: 10, modules: ['meetings', 'rbac'], issued_at: '2026-01-01T00:00:00Z', expires_at: '2099-01-01T00:00:00+02:00' });
    const text = signLicense(keys.privateKey, payload);
    const res = await call(env, 'POST', '/license', { token: admin, body: { license: `${text}\n` } });
    t.equal(res.statusCode, 200);
    const status = res.json();
    t.same(status, {
      edition: 'enterprise', status: 'active', license_id: 'LIC-42', customer: 'Example Corp', modules: ['meetings', 'rbac'], seats: 10,
      issued_at: '2026-01-01T00:00:00.000Z', expires_at: '2098-12-31T22:00:00.000Z', installed_at: status.installed_at,
      features: { ...NO_FEATURES, api_keys: true, audit_log: true, webhook_endpoints: true, reporting: true, meetings: true, rbac: true },
    });
    t.same((await call(env, 'GET', '/license', { token: agent.token })).json(), status, 'agents may read the status');
    const row = await env.deps.db('licenses').where({ tenant_id: tenant.id, license_id: 'LIC-42' }).first();
    t.equal(row.raw, text);
    t.equal(row.installed_by, tenant.admin.id);
    const [audit] = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'license.applied' });
    t.match(audit, { resource_type: 'license', resource_id: row.id, actor_id: tenant.admin.id, changes: { license_id: 'LIC-42', edition: 'enterprise', seats: 10 } });
    t.equal((await call(env, 'GET', '/license', { token: other.admin.token })).json().status, 'none', 'the other tenant is unaffected');
    t.equal((await call(env, 'POST', '/api-keys', { token: admin, body: { name: 'k', scopes: ['tickets:read'] } })).statusCode, 201, 'gated routes open');
    t.equal((await call(env, 'GET', '/audit-log', { token: admin })).statusCode, 200);
  });

  await t.test('bad licences are 422 on the field license and change nothing', async (t) => {
    const before = await env.deps.db('licenses').where({ tenant_id: tenant.id }).count({ n: '*' });
    const stranger = licenseKeys();
    const cases: Array<[string, RegExp]> = [
      ['garbage', /malformed/],
      [signLicense(stranger.privateKey, licensePayload()), /invalid signature/],
      [signLicense(keys.privateKey, licensePayload({ expires_at: '2020-01-01T00:00:00Z' })), /has expired/],
      [signLicense(keys.privateKey, licensePayload({ modules: ['warp'] })), /unknown module/],
      [signLicense(keys.privateKey, licensePayload({ edition: 'gold' })), /unknown edition/],
    ];
    for (const [license, message] of cases) {
      const res = await call(env, 'POST', '/license', { token: admin, body: { license } });
      t.equal(res.statusCode, 422);
      t.equal(res.json().code, 'validation_failed');
      t.equal(res.json().details.length, 1);
      t.equal(res.json().details[0].field, 'license');
      t.match(res.json().details[0].message, message);
    }
    const missing = await call(env, 'POST', '/license', { token: admin, body: {} });
    t.same(missing.json().details, [{ field: 'license', message: 'is required' }]);
    t.equal((await call(env, 'POST', '/license', { token: admin, body: { license: 'x', extra: 1 } })).statusCode, 422);
    t.same(await env.deps.db('licenses').where({ tenant_id: tenant.id }).count({ n: '*' }), before);
  });

  await t.test('who may install', async (t) => {
    const text = signLicense(keys.privateKey, licensePayload());
    const byAgent = await call(env, 'POST', '/license', { token: agent.token, body: { license: text } });
    t.equal(byAgent.statusCode, 403);
    t.equal(byAgent.json().code, 'forbidden');
    t.equal((await call(env, 'GET', '/license', { token: customer.token })).statusCode, 403);
    t.equal((await call(env, 'GET', '/license')).statusCode, 401);
    t.equal((await call(env, 'POST', '/license', { body: { license: text } })).statusCode, 401);
  });

  await t.test('an expired licence falls back to Community', async (t) => {
    const past = new Date(Date.now() - 60_000);
    await storeLicenseRow(env, tenant.id, { license_id: 'LIC-OLD', customer: 'Lapsed', modules: ['bi'], seats: 5, issued_at: new Date('2025-01-01T00:00:00Z'), expires_at: past });
    const res = await call(env, 'GET', '/license', { token: admin });
    t.match(res.json(), { edition: 'community', status: 'expired', license_id: 'LIC-OLD', modules: ['bi'], seats: 5, expires_at: past.toISOString(), features: NO_FEATURES });
    const apiKey = await call(env, 'POST', '/api-keys', { token: admin, body: { name: 'k', scopes: ['tickets:read'] } });
    t.equal(apiKey.statusCode, 403);
    t.same(apiKey.json().details, { feature: 'api_keys' });
    t.equal((await call(env, 'GET', '/audit-log', { token: admin })).statusCode, 403);
  });
});

t.test('without a configured public key no licence can be installed', async (t) => {
  const env = await testApp(t, { licensePublicKey: null });
  const tenant = await tenantFixture(env);
  const res = await call(env, 'POST', '/license', { token: tenant.admin.token, body: { license: signLicense(keys.privateKey, licensePayload()) } });
  t.equal(res.statusCode, 422);
  t.match(res.json().details, [{ field: 'license', message: /no licence public key is configured/ }]);
});

t.test('the raw base64 public key form works end to end', async (t) => {
  const env = await testApp(t, { licensePublicKey: keys.publicKeyRaw });
  const tenant = await tenantFixture(env);
  const res = await call(env, 'POST', '/license', { token: tenant.admin.token, body: { license: signLicense(keys.privateKey, licensePayload()) } });
  t.equal(res.statusCode, 200);
  t.equal(res.json().status, 'active');
});
