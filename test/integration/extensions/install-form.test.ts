import t from 'tap';
import { call, testApp, tenantFixture } from '../../helpers/app.js';
import { multipart } from '../../helpers/conversation.js';
import { buildPlugin, manifestFor } from '../../helpers/plugins.js';
import { CONTEXT_PLUGIN } from '../../helpers/plugin-sources.js';
import { count } from '../../helpers/tickets.js';

/** Installing as multipart/form-data (CONTRACT §13): parts `manifest` and `module`, the JSON form's checks. */

const plugin = buildPlugin(CONTEXT_PLUGIN);

/** A form with the manifest as a plain field (not a file) and the module as a file. */
function fieldForm(manifest: string, module: Buffer) {
  const boundary = '----helpdeskfield';
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="manifest"\r\n\r\n${manifest}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="module"; filename="plugin.wasm"\r\nContent-Type: application/wasm\r\n\r\n`),
    module, Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

t.test('multipart install: manifest as a file or a field, module as a file; same answer as JSON', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const token = tenant.admin.token;
  const wasm = Buffer.from(await plugin);
  const form = multipart([
    { name: 'manifest', filename: 'manifest.json', type: 'application/json', content: JSON.stringify(manifestFor({ name: 'from-file' })) },
    { name: 'module', filename: 'plugin.wasm', type: 'application/wasm', content: wasm },
  ]);
  const res = await call(env, 'POST', '/extensions', { token, body: form.payload, headers: form.headers });
  t.equal(res.statusCode, 201, res.body);
  t.match(res.json(), { name: 'from-file', kind: 'context_tool', enabled: true });
  const json = await call(env, 'POST', '/extensions', { token, body: { manifest: manifestFor({ name: 'from-json' }), module_base64: wasm.toString('base64') } });
  t.equal(json.statusCode, 201, json.body);
  t.equal(json.json().module_sha256, res.json().module_sha256, 'the same module, the same stored hash');

  const field = fieldForm(JSON.stringify(manifestFor({ name: 'from-field' })), wasm);
  const viaField = await call(env, 'POST', '/extensions', { token, body: field.payload, headers: field.headers });
  t.equal(viaField.statusCode, 201, viaField.body);
  t.equal(viaField.json().name, 'from-field');
  t.equal(await count(env, 'extensions', tenant.id), 3);
  const events = await env.deps.db('events').where({ tenant_id: tenant.id, type: 'extension.installed' });
  t.equal(events.length, 3);
});

t.test('multipart install refusals name each problem and store nothing', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const token = tenant.admin.token;
  const wasm = Buffer.from(await plugin);
  const send = async (parts: Parameters<typeof multipart>[0] | { payload: Buffer; headers: Record<string, string> }) => {
    const form = Array.isArray(parts) ? multipart(parts) : parts;
    return call(env, 'POST', '/extensions', { token, body: form.payload, headers: form.headers });
  };
  const fields = (res: Awaited<ReturnType<typeof send>>) => (res.json().details ?? []).map((d: { field: string }) => d.field);
  const manifestPart = (m: unknown) => ({ name: 'manifest', filename: 'm.json', content: typeof m === 'string' ? m : JSON.stringify(m) });
  const modulePart = (b: Buffer) => ({ name: 'module', filename: 'p.wasm', content: b });

  const missing = await send([]);
  t.equal(missing.statusCode, 422, missing.body);
  t.same(fields(missing).sort(), ['manifest', 'module']);

  const notJson = await send([manifestPart('{nope'), modulePart(wasm)]);
  t.equal(notJson.statusCode, 422);
  t.same(fields(notJson), ['manifest']);

  const rules = await send([manifestPart(manifestFor({ kind: 'spaceship', scopes: { webhook: true } })), modulePart(wasm)]);
  t.equal(rules.statusCode, 422, rules.body);
  t.ok(fields(rules).includes('manifest.kind') && fields(rules).includes('manifest.scopes.webhook'), rules.body);

  const badModule = await send([manifestPart(manifestFor()), modulePart(Buffer.from('not wasm'))]);
  t.equal(badModule.statusCode, 422);
  t.same(fields(badModule), ['module'], 'the module part is named as sent');

  const extra = await send([manifestPart(manifestFor()), modulePart(wasm), { name: 'other', filename: 'x', content: 'x' }]);
  t.equal(extra.statusCode, 422);
  t.same(fields(extra), ['other']);

  const twice = await send([manifestPart(manifestFor()), modulePart(wasm), modulePart(wasm)]);
  t.equal(twice.statusCode, 422);

  const huge = await send([manifestPart(manifestFor()), modulePart(Buffer.alloc(9 * 1024 * 1024, 1))]);
  t.equal(huge.statusCode, 413, huge.body.slice(0, 200));

  const emptyJson = await call(env, 'POST', '/extensions', { token, body: {} });
  t.equal(emptyJson.statusCode, 422, 'the JSON form is still checked against its schema');

  t.equal(await count(env, 'extensions', tenant.id), 0);
  t.equal(await count(env, 'events', tenant.id), 0);
  t.same(env.guard.violations, []);
});
