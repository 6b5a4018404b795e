import t from 'tap';
import { call, testApp, tenantFixture, type TestEnv } from '../../helpers/app.js';
import { buildPlugin, manifestFor } from '../../helpers/plugins.js';
import { RELAY_PLUGIN } from '../../helpers/plugin-sources.js';

/** The inbound extension hook, rule by rule (SPEC "Inbound extension hook behaviour"). */

async function installRelay(env: TestEnv, token: string) {
  const manifest = manifestFor({
    name: 'relay', kind: 'webhook_relay', entrypoints: ['webhook_receive'],
    config_fields: [{ key: 'webhook_secret', label: 'Signing secret', type: 'password', required: true }],
    scopes: { http_hosts: [], config_keys: ['webhook_secret'], webhook: true, core: [] },
  });
  const res = await call(env, 'POST', '/extensions', { token, body: { manifest, module_base64: Buffer.from(await buildPlugin(RELAY_PLUGIN)).toString('base64') } });
  if (res.statusCode !== 201) throw new Error(res.body);
  const ext = res.json();
  await call(env, 'PATCH', `/extensions/${ext.id}/config`, { token, body: { config: { webhook_secret: 's3cret' } } });
  return ext as { id: string; hook_url: string };
}

const pathOf = (hookUrl: string) => new URL(hookUrl).pathname;

t.test('the raw request reaches the plugin, which chooses the answer', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const ext = await installRelay(env, tenant.admin.token);
  const url = pathOf(ext.hook_url);
  const send = (method: 'GET' | 'POST', options: { query?: string; body?: string; headers?: Record<string, string> } = {}) =>
    env.app.inject({ method, url: url + (options.query ?? ''), headers: options.headers, ...(options.body !== undefined ? { payload: options.body } : {}) });

  const handshake = await send('GET', { query: '?challenge=abc123' });
  t.equal(handshake.statusCode, 200);
  t.equal(handshake.body, 'abc123', 'GET echoes the challenge');
  t.match(handshake.headers['content-type'], /text\/plain/);
  t.equal((await send('GET')).body, 'ready', 'GET without a challenge answers a short text');

  const unsigned = await send('POST', { body: '{"event":"x"}', headers: { 'content-type': 'application/json' } });
  t.equal(unsigned.statusCode, 401, 'the plugin refuses a bad signature');
  const retry = await send('POST', { body: 'retry', headers: { 'content-type': 'text/plain', 'x-signature': 's3cret' } });
  t.equal(retry.statusCode, 503, 'the plugin asks the vendor to retry');
  t.equal(retry.headers['retry-after'], '30');
  const boom = await send('POST', { body: 'boom', headers: { 'content-type': 'text/plain', 'x-signature': 's3cret' } });
  t.equal(boom.statusCode, 200, 'a plugin failure is answered 200');
  t.equal(boom.body, '');

  const xml = '<event id="7">ü</event>';
  const ok = await send('POST', { query: '?a=1&b=two', body: xml, headers: { 'content-type': 'application/xml', 'x-signature': 's3cret', 'x-vendor-event': 'e-7' } });
  t.equal(ok.statusCode, 202, ok.body);
  const seen = ok.json().input;
  t.equal(seen.method, 'POST');
  t.equal(seen.path, url);
  t.same(seen.query, { a: '1', b: 'two' });
  t.equal(seen.headers['content-type'], 'application/xml');
  t.equal(seen.headers['x-vendor-event'], 'e-7');
  t.equal(Buffer.from(seen.body_base64, 'base64').toString('utf8'), xml, 'the body bytes as they came');
  const json = await send('POST', { body: '{"not":"parsed"}', headers: { 'content-type': 'application/json', 'x-signature': 's3cret' } });
  t.equal(Buffer.from(json.json().input.body_base64, 'base64').toString('utf8'), '{"not":"parsed"}', 'JSON is passed through, not interpreted');

  // Rotation: the old address stops working at once.
  const rotated = await call(env, 'POST', `/extensions/${ext.id}/hook-token/rotate`, { token: tenant.admin.token });
  t.equal((await send('GET')).statusCode, 404, 'the old token is dead');
  t.equal((await env.app.inject({ method: 'GET', url: pathOf(rotated.json().hook_url) })).body, 'ready');
  t.equal((await env.app.inject({ method: 'GET', url: '/api/v1/integrations/extensions/hook/hkx_unknown' })).statusCode, 404);

  await call(env, 'PATCH', `/extensions/${ext.id}`, { token: tenant.admin.token, body: { enabled: false } });
  t.equal((await env.app.inject({ method: 'GET', url: pathOf(rotated.json().hook_url) })).statusCode, 404, 'a disabled extension has no hook');
  t.same(env.guard.violations, []);
});

t.test('calls are limited per extension; another extension is not affected', async (t) => {
  const env = await testApp(t, { extensionHookPerMin: 3 });
  const a = await tenantFixture(env);
  const b = await tenantFixture(env);
  const extA = await installRelay(env, a.admin.token);
  const extB = await installRelay(env, b.admin.token);
  for (let i = 0; i < 3; i++) t.equal((await env.app.inject({ method: 'GET', url: pathOf(extA.hook_url) })).statusCode, 200);
  const limited = await env.app.inject({ method: 'GET', url: pathOf(extA.hook_url) });
  t.equal(limited.statusCode, 429);
  t.equal(limited.json().code, 'rate_limited');
  t.ok(Number(limited.headers['retry-after']) >= 1);
  t.equal((await env.app.inject({ method: 'GET', url: pathOf(extB.hook_url) })).statusCode, 200, "another tenant's extension still answers");
});
