import t from 'tap';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { buildPlugin, manifestFor } from '../../helpers/plugins.js';
import { CONTEXT_ENTRYPOINTS, CONTEXT_PLUGIN } from '../../helpers/plugin-sources.js';
import { openTicket } from '../../helpers/tickets.js';
import { warmInstances } from '../../../src/extensions/host.js';

/**
 * The plugin host against hostile plugins built here with the real toolchain: an endless loop, a
 * huge allocation, a forbidden host, a redirect to a forbidden place, a trap. None of them stops
 * the daemon or slows another tenant; a failed instance is replaced.
 */

interface Vendor { server: Server; base: string; hits: Record<string, number> }

async function vendor(t: { teardown(fn: () => unknown): void }): Promise<Vendor> {
  const hits: Record<string, number> = {};
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits[path] = (hits[path] ?? 0) + 1;
    if (path === '/redirect') { res.writeHead(302, { location: `http://localhost:${(server.address() as AddressInfo).port}/secret` }); res.end(); return; }
    if (path === '/secret') { res.end('the metadata secret'); return; }
    res.setHeader('content-type', 'application/json');
    res.end('{"id":"TRK-1","state":"open"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

interface TrackerOptions { hosts?: string[]; base?: string; forbiddenUrl?: string }

async function installTracker(env: TestEnv, token: string, v: Vendor, name = 'tracker', options: TrackerOptions = {}) {
  const manifest = manifestFor({
    name, entrypoints: CONTEXT_ENTRYPOINTS,
    config_fields: [
      { key: 'base_url', label: 'Base URL', type: 'text' }, { key: 'api_key', label: 'API key', type: 'password' },
      { key: 'hidden', label: 'Hidden', type: 'password' }, { key: 'forbidden_url', label: 'x', type: 'text' },
    ],
    scopes: { http_hosts: options.hosts ?? ['127.0.0.1'], config_keys: ['base_url', 'api_key', 'forbidden_url'], webhook: false, core: [] },
    read_ops: ['list_projects'], search_op: 'list_projects', create_op: 'create_issue',
  });
  const res = await call(env, 'POST', '/extensions', { token, body: { manifest, module_base64: Buffer.from(await buildPlugin(CONTEXT_PLUGIN)).toString('base64') } });
  if (res.statusCode !== 201) throw new Error(res.body);
  const ext = res.json();
  const port = new URL(v.base).port;
  const cfg = await call(env, 'PATCH', `/extensions/${ext.id}/config`, {
    token, body: { config: { base_url: options.base ?? v.base, api_key: 'sk-123', hidden: 'never-shown', forbidden_url: options.forbiddenUrl ?? `http://localhost:${port}/secret` } },
  });
  if (cfg.statusCode !== 200) throw new Error(cfg.body);
  return ext;
}

t.test('the context panel, actions, link, create and read ops through a real plugin and a fake vendor', async (t) => {
  // The vendor stands on loopback: reachable only with the allowance the webhook tests use too.
  const env = await testApp(t, { webhooksAllowPrivate: true });
  const v = await vendor(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const token = tenant.admin.token;
  const ext = await installTracker(env, token, v);
  const agent = await userFixture(env, tenant.id, 'agent');
  const ticket = await openTicket(env, token, { subject: 'Printer on fire', requester: { email: 'c@example.com' } });

  const panel = await call(env, 'GET', `/tickets/${ticket.id}/extension-context/tracker`, { token: agent.token });
  t.equal(panel.statusCode, 200, panel.body);
  const block = panel.json();
  t.match(block, { provider: 'tracker', external_id: null, title: 'Tracker', checklist: [{ id: 'c1', name: 'Check', completed: true }] });
  const field = (label: string) => block.fields.find((f: { label: string }) => f.label === label)?.value;
  t.equal(field('vendor'), '{"id":"TRK-1","state":"open"}', 'the plugin reached its vendor');
  t.equal(field('api_key'), 'sk-123', 'a listed config key is readable (decrypted)');
  t.equal(field('hidden'), '', 'a key outside scopes.config_keys is not');
  const input = JSON.parse(field('input'));
  t.match(input, { ticket: { ticket_id: ticket.id, subject: 'Printer on fire', ticket_number: ticket.ticket_number }, link: null });

  t.equal((await call(env, 'GET', `/tickets/${ticket.id}/extension-context/tracker`, { token: other.admin.token })).statusCode, 404, 'another tenant: 404');
  t.equal((await call(env, 'GET', `/tickets/${ticket.id}/extension-context/nothing`, { token })).statusCode, 404);

  const action = await call(env, 'POST', `/tickets/${ticket.id}/extension-actions/tracker`, { token: agent.token, body: { op: 'toggle_item', params: { item_id: 'c1', completed: 'false' } } });
  t.equal(action.statusCode, 200, action.body);
  t.same(action.json(), { op: 'toggle_item', result: { summary: 'toggled' } });
  t.equal((await call(env, 'POST', `/tickets/${ticket.id}/extension-actions/tracker`, { token, body: { op: 'create_issue' } })).statusCode, 422, 'lifecycle ops are not actions');

  const link = await call(env, 'POST', `/tickets/${ticket.id}/extension-link/tracker`, { token: agent.token, body: { external_id: 'TRK-1' } });
  t.equal(link.statusCode, 200, link.body);
  t.match(link.json(), { provider: 'tracker', ticket_id: ticket.id, external_id: 'TRK-1' });
  t.equal((await call(env, 'GET', `/tickets/${ticket.id}/extension-context/tracker`, { token })).json().external_id, 'TRK-1');
  t.equal((await call(env, 'DELETE', `/tickets/${ticket.id}/extension-link/tracker`, { token: agent.token })).statusCode, 204);
  t.equal((await call(env, 'DELETE', `/tickets/${ticket.id}/extension-link/tracker`, { token: agent.token })).statusCode, 404);

  const created = await call(env, 'POST', `/tickets/${ticket.id}/extension-create/tracker`, { token: agent.token, body: { values: { project: 'p1', title: 'Fire' } } });
  t.equal(created.statusCode, 200, created.body);
  t.match(created.json(), { key: 'TRK-7', url: 'https://tracker.example/TRK-7' });
  t.equal((await call(env, 'GET', `/tickets/${ticket.id}/extension-context/tracker`, { token })).json().external_id, 'TRK-7', 'the service recorded the link');

  const ops = await call(env, 'GET', '/extension-ops/tracker/list_projects?q=pro', { token: agent.token });
  t.equal(ops.statusCode, 200, ops.body);
  t.match(ops.json(), { options: [{ value: 'p1', label: 'Project 1' }], input: { q: 'pro' } });
  t.equal((await call(env, 'GET', '/extension-ops/tracker/spin', { token })).statusCode, 404, 'only read ops are callable');
  const customer = await userFixture(env, tenant.id, 'customer');
  t.equal((await call(env, 'GET', '/extension-ops/tracker/list_projects', { token: customer.token })).statusCode, 403);

  const events = await env.deps.db('events').where({ tenant_id: tenant.id, type: 'ticket.extension_action' }).orderBy('created_at').orderBy('id');
  t.same(events.map((e: any) => [e.data.from, e.data.to, e.data.actor_id]), [
    ['tracker: toggle_item', 'toggled', agent.id], ['tracker: create_issue', 'created TRK-7', agent.id],
  ]);
  const audit = (await env.deps.db('audit_log').where({ tenant_id: tenant.id }).whereLike('action', 'extension.%')).map((a: any) => a.action);
  for (const a of ['extension.action', 'extension.linked', 'extension.unlinked', 'extension.created']) t.ok(audit.includes(a), a);

  await call(env, 'PATCH', `/extensions/${ext.id}`, { token, body: { enabled: false } });
  t.equal((await call(env, 'GET', `/tickets/${ticket.id}/extension-context/tracker`, { token })).statusCode, 409, 'a disabled extension does not run');
  t.same(env.guard.violations, []);
});

t.test('hostile plugins: endless loop, huge allocation, forbidden host, redirect, trap', async (t) => {
  const env = await testApp(t, { extensionTimeoutMs: 2000, webhooksAllowPrivate: true });
  const v = await vendor(t);
  const evil = await tenantFixture(env);
  const good = await tenantFixture(env);
  const evilExt = await installTracker(env, evil.admin.token, v, 'evil');
  await installTracker(env, good.admin.token, v, 'tracker');
  const evilTicket = await openTicket(env, evil.admin.token, { requester: { email: 'c@example.com' } });
  const goodTicket = await openTicket(env, good.admin.token, { requester: { email: 'c@example.com' } });
  const act = (op: string) => call(env, 'POST', `/tickets/${evilTicket.id}/extension-actions/evil`, { token: evil.admin.token, body: { op } });
  const failed = (res: { statusCode: number; body: string }, label: string, reason: RegExp) => {
    t.equal(res.statusCode, 502, `${label}: ${res.body.slice(0, 200)}`);
    t.equal(JSON.parse(res.body).code, 'extension_failed', label);
    t.match(JSON.parse(res.body).message, reason, label);
  };

  // The endless loop runs while another tenant's panel answers promptly and the daemon stays up.
  const started = Date.now();
  let loopEnded = false;
  const looping = act('spin').finally(() => { loopEnded = true; });
  await new Promise((r) => setTimeout(r, 100));
  const goodPanel = await call(env, 'GET', `/tickets/${goodTicket.id}/extension-context/tracker`, { token: good.admin.token });
  t.equal(goodPanel.statusCode, 200);
  t.equal((await call(env, 'GET', '/healthz')).statusCode, 200);
  t.notOk(loopEnded, "another tenant's panel and the health check answered while the loop still ran");
  failed(await looping, 'endless loop', /did not answer within 2000 ms/);
  t.ok(Date.now() - started < 6000, 'stopped at the time-out');

  failed(await act('hog'), 'huge allocation', /.+/);
  const before = v.hits['/secret'] ?? 0;
  failed(await act('forbidden'), 'forbidden host', /not allowed/);
  t.equal(v.hits['/secret'] ?? 0, before, 'the forbidden host saw no request');
  const redirect = await act('redirect');
  t.equal(redirect.statusCode, 200, redirect.body);
  t.equal(redirect.json().result.summary, '302', 'the plugin sees the redirect; it is not followed');
  t.equal(v.hits['/secret'] ?? 0, before, 'the redirect target saw no request');
  failed(await act('trap'), 'trap', /unreachable/);
  failed(await act('not_json'), 'an answer that is not JSON', /not a JSON document/);

  // After every failure the instance was replaced: the plugin still answers.
  const after = await call(env, 'GET', `/tickets/${evilTicket.id}/extension-context/evil`, { token: evil.admin.token });
  t.equal(after.statusCode, 200, after.body);
  t.ok(warmInstances(evilExt.id) >= 1 && warmInstances(evilExt.id) <= 2, 'a small warm pool');
  // Nothing of the failed actions was recorded.
  t.equal((await env.deps.db('events').where({ tenant_id: evil.id, type: 'ticket.extension_action' })).length, 1, 'only the redirect action');
});

t.test('outbound-target rules: a manifest allowing loopback or the metadata address is still refused without the allowance', async (t) => {
  const env = await testApp(t, { webhooksAllowPrivate: false });
  const v = await vendor(t);
  const tenant = await tenantFixture(env);
  const token = tenant.admin.token;
  const port = new URL(v.base).port;
  // A name (not a literal) that resolves to a non-public address: the machine's own name, if it does.
  const { lookup } = await import('node:dns/promises');
  const { hostname } = await import('node:os');
  const { isForbiddenAddress } = await import('../../../src/webhooks/url-guard.js');
  const own = hostname().toLowerCase();
  const ownIsPrivate = await lookup(own).then((a) => isForbiddenAddress(a.address), () => false);
  await installTracker(env, token, v, 'tracker', {
    hosts: ['127.0.0.1', '169.254.169.254', 'localhost', own], forbiddenUrl: 'http://169.254.169.254/latest/meta-data/iam',
  });
  const ticket = await openTicket(env, token, { requester: { email: 'c@example.com' } });
  const refused = (res: { statusCode: number; body: string }, label: string) => {
    t.equal(res.statusCode, 502, `${label}: ${res.body.slice(0, 300)}`);
    t.equal(JSON.parse(res.body).code, 'extension_failed', label);
    t.match(JSON.parse(res.body).message, /refused/, label);
  };
  refused(await call(env, 'GET', `/tickets/${ticket.id}/extension-context/tracker`, { token }), 'a loopback literal the manifest allows');
  refused(await call(env, 'POST', `/tickets/${ticket.id}/extension-actions/tracker`, { token, body: { op: 'forbidden' } }), 'the metadata address the manifest allows');

  const byName = async (name: string, base: string) => {
    await call(env, 'DELETE', `/extensions/${(await env.deps.db('extensions').where({ tenant_id: tenant.id, name: 'tracker' }).first()).id}`, { token });
    await installTracker(env, token, v, 'tracker', { hosts: ['localhost', own], base });
    refused(await call(env, 'GET', `/tickets/${ticket.id}/extension-context/tracker`, { token }), name);
  };
  await byName('localhost (a reserved name)', `http://localhost:${port}`);
  if (ownIsPrivate) await byName(`${own}, a name resolving to a non-public address (checked on the resolved address)`, `http://${own}:${port}`);
  else t.comment(`${own} does not resolve to a non-public address here; the resolved-address case is not run`);
  t.same(v.hits, {}, 'the loopback vendor saw no request');

  // The same plugin with the allowance reaches the vendor.
  const open = await testApp(t, { webhooksAllowPrivate: true });
  const other = await tenantFixture(open);
  await installTracker(open, other.admin.token, v, 'tracker', { hosts: ['127.0.0.1', own] });
  const otherTicket = await openTicket(open, other.admin.token, { requester: { email: 'c@example.com' } });
  t.equal((await call(open, 'GET', `/tickets/${otherTicket.id}/extension-context/tracker`, { token: other.admin.token })).statusCode, 200);
  t.ok(Object.keys(v.hits).length > 0, 'with the allowance the vendor is reached');
});

t.test('a module without a memory maximum is capped; one asking for more than the cap up front is refused', async (t) => {
  const { inspectModule } = await import('../../../src/extensions/wasm-module.js');
  // What asc builds declares no memory maximum; the stored module has one.
  const wasm = await buildPlugin(CONTEXT_PLUGIN);
  const declared = (bytes: Uint8Array<ArrayBuffer>) => {
    const exported = new WebAssembly.Module(bytes);
    return WebAssembly.Module.exports(exported).some((e) => e.kind === 'memory');
  };
  t.ok(declared(inspectModule(wasm, 1024).bytes), 'the capped module still exports its memory and compiles');
  // A hand-made module asking for 2000 pages at start.
  const big = Uint8Array.from([0, 97, 115, 109, 1, 0, 0, 0, 5, 4, 1, 0, 0xd0, 0x0f]);
  t.throws(() => inspectModule(big, 1024), /asks for 2000 pages/);
  // No maximum declared: one is added.
  const open = Uint8Array.from([0, 97, 115, 109, 1, 0, 0, 0, 5, 3, 1, 0, 1, 7, 10, 1, 6, 109, 101, 109, 111, 114, 121, 2, 0]);
  const rewritten = inspectModule(open, 1024).bytes;
  const instance = new WebAssembly.Instance(new WebAssembly.Module(rewritten));
  const memory = instance.exports.memory as WebAssembly.Memory;
  t.throws(() => memory.grow(1024), 'growing past 64 MiB fails');
  t.equal(memory.grow(1023), 1, 'up to the cap is fine');
  // An imported memory is refused (its size would be ours to give, not the module's to declare).
  const imported = Uint8Array.from([0, 97, 115, 109, 1, 0, 0, 0, 2, 8, 1, 1, 109, 1, 109, 2, 0, 1]);
  t.throws(() => inspectModule(imported, 1024), /imports its memory/);
  t.throws(() => inspectModule(Uint8Array.from([1, 2, 3]), 1024), /not a WebAssembly module/);
});
