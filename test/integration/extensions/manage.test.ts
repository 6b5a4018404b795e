import t from 'tap';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { buildPlugin, manifestFor } from '../../helpers/plugins.js';
import { CONTEXT_ENTRYPOINTS, CONTEXT_PLUGIN } from '../../helpers/plugin-sources.js';
import { count } from '../../helpers/tickets.js';

/** Installing and managing extensions: manifest rules, storage by hash, secrets, events, audit, isolation. */

const plugin = buildPlugin(CONTEXT_PLUGIN);
const b64 = async () => Buffer.from(await plugin).toString('base64');
const moduleFiles = (dataDir: string) => {
  const dir = join(dataDir, 'attachments', 'extensions');
  return existsSync(dir) ? readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith('.wasm')) : [];
};

t.test('a manifest breaking the rules is refused naming every problem, and nothing is stored', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const token = tenant.admin.token;
  const refused = async (manifest: unknown, fields: string[], module_base64?: string) => {
    const res = await call(env, 'POST', '/extensions', { token, body: { manifest, module_base64: module_base64 ?? await b64() } });
    t.equal(res.statusCode, 422, res.body.slice(0, 300));
    const named = (res.json().details ?? []).map((d: { field: string }) => d.field);
    for (const f of fields) t.ok(named.includes(f), `names ${f}: ${res.body.slice(0, 600)}`);
  };
  await refused(manifestFor({ scopes: { webhook: true } }), ['manifest.scopes.webhook']);
  await refused(manifestFor({ entrypoints: ['fetch_context', 'webhook_receive'] }), ['manifest.entrypoints', 'manifest.entrypoints.1']);
  await refused(manifestFor({ entrypoints: ['fetch_context', 'missing_op'] }), ['manifest.entrypoints.1']);
  await refused(manifestFor({ kind: 'spaceship', name: 'Bad Name', version: '' }), ['manifest.kind', 'manifest.name', 'manifest.version']);
  await refused(manifestFor({ read_ops: ['nope'], create_op: 'ghost', colour: 'red' }), ['manifest.read_ops.0', 'manifest.create_op', 'manifest.colour']);
  await refused(manifestFor({ scopes: { http_hosts: ['http://x'], config_keys: ['undeclared'], core: ['root:all'] } }),
    ['manifest.scopes.http_hosts.0', 'manifest.scopes.config_keys.0', 'manifest.scopes.core.0']);
  await refused(manifestFor({ config_fields: [{ key: 'a', label: 'A', type: 'secret' }, { key: 'a', label: '' }] }),
    ['manifest.config_fields.0.type', 'manifest.config_fields.1.key', 'manifest.config_fields.1.label']);
  await refused(manifestFor({ kind: 'webhook_relay' }), ['manifest.entrypoints']);
  await refused(manifestFor({ entrypoints: [...CONTEXT_ENTRYPOINTS], search_op: 'list_projects' }), ['manifest.search_op']);
  await refused(manifestFor(), ['module_base64'], Buffer.from('not wasm at all').toString('base64'));
  await refused('just a string', ['manifest']);
  t.equal(await count(env, 'extensions', tenant.id), 0);
  t.equal(await count(env, 'events', tenant.id), 0);
  t.same(moduleFiles(env.config.dataDir), [], 'no module stored');
  t.same(env.guard.violations, []);
});

t.test('install, read, configure (secrets encrypted, masked), enable/disable, uninstall: events and audit', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const token = tenant.admin.token;
  const manifest = manifestFor({
    name: 'tracker', entrypoints: [...CONTEXT_ENTRYPOINTS, 'webhook_receive'].filter((e) => e !== 'webhook_receive'),
    config_fields: [
      { key: 'base_url', label: 'Base URL', type: 'text', required: true },
      { key: 'api_key', label: 'API key', type: 'password', required: true },
      { key: 'hidden', label: 'Not for the plugin', type: 'password' },
    ],
    scopes: { http_hosts: ['127.0.0.1'], config_keys: ['base_url', 'api_key'], webhook: false, core: ['tickets:read'] },
    read_ops: ['list_projects'], search_op: 'list_projects', create_op: 'create_issue',
  });
  const created = await call(env, 'POST', '/extensions', { token, body: { manifest, module_base64: await b64() } });
  t.equal(created.statusCode, 201, created.body);
  const ext = created.json();
  t.match(ext, { name: 'tracker', version: '1.0.0', kind: 'context_tool', enabled: true, hook_url: null, config: {}, search_op: 'list_projects' });
  t.match(ext.module_sha256, /^[0-9a-f]{64}$/);
  t.equal(moduleFiles(env.config.dataDir).length, 1, 'the module is stored once, by hash');

  const twice = await call(env, 'POST', '/extensions', { token, body: { manifest, module_base64: await b64() } });
  t.equal(twice.statusCode, 409);
  t.equal(twice.json().code, 'already_exists');

  const configured = await call(env, 'PATCH', `/extensions/${ext.id}/config`, { token, body: { config: { base_url: 'http://127.0.0.1:1', api_key: 'sk-live-123456', hidden: 'top-secret' } } });
  t.equal(configured.statusCode, 200, configured.body);
  t.same(configured.json().config, { base_url: 'http://127.0.0.1:1', api_key: '********', hidden: '********' });
  const row = await env.deps.db('extensions').where({ tenant_id: tenant.id, id: ext.id }).first();
  t.notOk(JSON.stringify(row).includes('sk-live-123456'), 'the secret is not stored in clear');
  t.same(JSON.parse(env.deps.box.decrypt(row.secrets_enc)), { api_key: 'sk-live-123456', hidden: 'top-secret' });
  t.same(row.config, { base_url: 'http://127.0.0.1:1' }, 'plain values are a JSON object (the hook reads the row without the model)');
  const unknownKey = await call(env, 'PATCH', `/extensions/${ext.id}/config`, { token, body: { config: { nope: 'x' } } });
  t.equal(unknownKey.statusCode, 422);
  t.equal(unknownKey.json().details[0].field, 'config.nope');

  t.equal((await call(env, 'GET', `/extensions/${ext.id}`, { token: other.admin.token })).statusCode, 404, 'another tenant sees nothing');
  t.equal((await call(env, 'PATCH', `/extensions/${ext.id}`, { token: other.admin.token, body: { enabled: false } })).statusCode, 404);
  t.equal((await call(env, 'DELETE', `/extensions/${ext.id}`, { token: other.admin.token })).statusCode, 404);
  t.match((await call(env, 'GET', '/extensions', { token })).json(), { data: [{ id: ext.id }], meta: { total: 1 } });
  t.match((await call(env, 'GET', '/extensions', { token: other.admin.token })).json(), { data: [], meta: { total: 0 } });

  const agent = await userFixture(env, tenant.id, 'agent');
  t.equal((await call(env, 'POST', '/extensions', { token: agent.token, body: { manifest, module_base64: await b64() } })).statusCode, 403);

  t.equal((await call(env, 'PATCH', `/extensions/${ext.id}`, { token, body: { enabled: false } })).json().enabled, false);
  t.equal((await call(env, 'PATCH', `/extensions/${ext.id}`, { token, body: { enabled: true } })).json().enabled, true);
  t.equal((await call(env, 'POST', `/extensions/${ext.id}/hook-token/rotate`, { token })).statusCode, 409, 'no hook without scopes.webhook');
  t.equal((await call(env, 'DELETE', `/extensions/${ext.id}`, { token })).statusCode, 204);
  t.equal((await call(env, 'GET', `/extensions/${ext.id}`, { token })).statusCode, 404);
  t.same(moduleFiles(env.config.dataDir), [], 'the module goes with its last install');

  const events = await env.deps.db('events').where({ tenant_id: tenant.id }).orderBy('created_at').orderBy('id');
  t.same(events.map((e: any) => e.type), ['extension.installed', 'extension.disabled', 'extension.enabled', 'extension.uninstalled']);
  t.same(events[0].data, { extension_id: ext.id, name: 'tracker', kind: 'context_tool' });
  const audit = await env.deps.db('audit_log').where({ tenant_id: tenant.id }).whereLike('action', 'extension.%').orderBy('created_at').orderBy('id');
  t.same(audit.map((a: any) => a.action), ['extension.installed', 'extension.configured', 'extension.disabled', 'extension.enabled', 'extension.uninstalled']);
  t.notOk(JSON.stringify(audit).includes('sk-live'), 'config values stay out of the audit log');
  t.same(env.guard.violations, []);
});

t.test('a webhook plugin gets a hook URL that rotation replaces', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const token = tenant.admin.token;
  const source = `import { Host } from "@extism/as-pdk";
export function myAbort(m: string | null, f: string | null, l: u32, c: u32): void { unreachable(); }
export function webhook_receive(): i32 { Host.outputString('{"status":200}'); return 0; }`;
  const wasm = Buffer.from(await buildPlugin(source)).toString('base64');
  const manifest = manifestFor({ name: 'relay', kind: 'webhook_relay', entrypoints: ['webhook_receive'], scopes: { webhook: true } });
  const created = await call(env, 'POST', '/extensions', { token, body: { manifest, module_base64: wasm } });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json().hook_url, /\/api\/v1\/integrations\/extensions\/hook\/hkx_[A-Za-z0-9_-]+$/);
  t.equal((await call(env, 'GET', `/extensions/${created.json().id}`, { token })).json().hook_url, created.json().hook_url);
  const rotated = await call(env, 'POST', `/extensions/${created.json().id}/hook-token/rotate`, { token });
  t.equal(rotated.statusCode, 200);
  t.not(rotated.json().hook_url, created.json().hook_url);
  t.equal((await call(env, 'GET', `/extensions/${created.json().id}`, { token })).json().hook_url, rotated.json().hook_url);
});
