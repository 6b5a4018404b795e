import t from 'tap';
import { createHmac } from 'node:crypto';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { startReceiver } from '../../helpers/webhook-receiver.js';
import { SYSTEM_ACTOR } from '../../../src/core/context.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { emitTicketChange } from '../../../src/events/emit/ticket-change.js';
import { runJob } from '../../../src/jobs/runner.js';

/** Endpoint management through the API: licence, secrets, validation, SSRF guard, audit, history, ping. */

t.test('create is Enterprise; the secret is whole once, masked after, encrypted at rest', async (t) => {
  const keys = licenseKeys();
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem, webhooksAllowPrivate: true });
  const tenant = await tenantFixture(env);
  const token = tenant.admin.token;
  const body = { name: 'CRM sync', url: 'https://hooks.example.com/helpdesk', events: ['ticket.created', 'customer.updated'], headers: { 'X-Api-Key': 'k-1' } };

  const community = await call(env, 'POST', '/webhook-endpoints', { token, body });
  t.equal(community.statusCode, 403);
  t.match(community.json(), { code: 'feature_not_licensed', details: { feature: 'webhook_endpoints' } });
  t.equal((await env.deps.db('webhook_endpoints').where({ tenant_id: tenant.id })).length, 0);

  await grantLicense(env, tenant.id, keys);
  const created = await call(env, 'POST', '/webhook-endpoints', { token, body });
  t.equal(created.statusCode, 201, created.body);
  const endpoint = created.json();
  t.match(endpoint, { name: 'CRM sync', url: body.url, events: body.events, headers: body.headers, active: true });
  t.match(endpoint.secret, /^whsec_[0-9a-f]{64}$/);
  const masked = `whsec_********${endpoint.secret.slice(-4)}`;

  const got = await call(env, 'GET', `/webhook-endpoints/${endpoint.id}`, { token });
  t.equal(got.json().secret, masked);
  const list = await call(env, 'GET', '/webhook-endpoints', { token });
  t.match(list.json(), { data: [{ id: endpoint.id, secret: masked }], meta: { page: 1, page_size: 20, total: 1 } });

  const stored = await env.deps.db('webhook_endpoints').where({ tenant_id: tenant.id, id: endpoint.id }).first();
  t.notOk(JSON.stringify(stored).includes(endpoint.secret.slice(6)), 'the secret is not stored in clear');
  t.equal(env.deps.box.decrypt(stored.secret_enc), endpoint.secret);

  // The licence gates creation only: an endpoint keeps working after the licence ends.
  const patched = await call(env, 'PATCH', `/webhook-endpoints/${endpoint.id}`, { token, body: { name: 'CRM', events: ['ticket.created'], headers: {} } });
  t.equal(patched.statusCode, 200);
  t.match(patched.json(), { name: 'CRM', events: ['ticket.created'], headers: {}, secret: masked });

  const audit = await env.deps.db('audit_log').where({ tenant_id: tenant.id }).whereLike('action', 'webhook_endpoint.%').orderBy('created_at').orderBy('id');
  t.same(audit.map((a: any) => a.action), ['webhook_endpoint.created', 'webhook_endpoint.updated']);
  t.notOk(JSON.stringify(audit).includes('k-1'), 'header values stay out of the audit log');
  t.notOk(JSON.stringify(audit).includes(endpoint.secret), 'the secret stays out of the audit log');
  t.same(audit[1].changes.headers, { from: ['X-Api-Key'], to: [] }, 'the audit names the headers only');

  const rotated = await call(env, 'POST', `/webhook-endpoints/${endpoint.id}/regenerate-secret`, { token });
  t.match(rotated.json().secret, /^whsec_[0-9a-f]{64}$/);
  t.equal((await call(env, 'GET', `/webhook-endpoints/${endpoint.id}`, { token })).json().secret, `whsec_********${rotated.json().secret.slice(-4)}`);

  const del = await call(env, 'DELETE', `/webhook-endpoints/${endpoint.id}`, { token });
  t.equal(del.statusCode, 204);
  t.equal((await call(env, 'GET', `/webhook-endpoints/${endpoint.id}`, { token })).statusCode, 404);
  t.equal((await call(env, 'DELETE', `/webhook-endpoints/${endpoint.id}`, { token })).statusCode, 404);
  const actions = (await env.deps.db('audit_log').where({ tenant_id: tenant.id }).whereLike('action', 'webhook_endpoint.%')).map((a: any) => a.action);
  t.ok(actions.includes('webhook_endpoint.secret_rotated') && actions.includes('webhook_endpoint.deleted'));
  t.same(env.guard.violations, []);
});

t.test('bad input is refused field by field and writes nothing', async (t) => {
  const keys = licenseKeys();
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem, webhooksAllowPrivate: false });
  const tenant = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  const token = tenant.admin.token;
  const base = { name: 'x', url: 'https://8.8.8.8/hook', events: ['ticket.created'] };
  const refused = async (body: Record<string, unknown>, field: string, message?: RegExp) => {
    const res = await call(env, 'POST', '/webhook-endpoints', { token, body });
    t.equal(res.statusCode, 422, `${JSON.stringify(body).slice(0, 120)}: ${res.body.slice(0, 200)}`);
    t.ok(res.json().details?.some((d: { field: string; message: string }) => d.field === field && (!message || message.test(d.message))), `names ${field}: ${res.body.slice(0, 300)}`);
  };
  await refused({ ...base, events: ['ticket.exploded'] }, 'events.0');
  await refused({ ...base, events: [] }, 'events');
  await refused({ ...base, name: '  ' }, 'name');
  await refused({ ...base, url: 'ftp://example.com/x' }, 'url');
  await refused({ ...base, url: 'http://8.8.8.8/hook' }, 'url', /https/);
  await refused({ ...base, url: 'https://user:pw@8.8.8.8/hook' }, 'url', /credentials/);
  await refused({ ...base, headers: { 'X-Helpdesk-Signature': 'forged' } }, 'headers.X-Helpdesk-Signature', /cannot be overridden/);
  await refused({ ...base, headers: { 'content-type': 'text/plain' } }, 'headers.content-type');
  await refused({ ...base, headers: { 'Bad Header': 'x' } }, 'headers.Bad Header');
  await refused({ ...base, headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])) }, 'headers');
  await refused({ ...base, url: `https://example.com/${'a'.repeat(2000)}` }, 'url');

  // SSRF guard at registration: every non-public target, literal or by name.
  for (const url of [
    'https://127.0.0.1/x', 'https://[::1]/x', 'https://10.0.0.8/x', 'https://172.16.3.4/x', 'https://192.168.1.1/x',
    'https://169.254.169.254/latest/meta-data', 'https://100.64.0.1/x', 'https://[fd00::1]/x', 'https://[fe80::1]/x',
    'https://[::ffff:127.0.0.1]/x', 'https://[::ffff:10.0.0.1]/x', 'https://0.0.0.0/x', 'https://2130706433/x',
    'https://localhost/x', 'https://api.localhost/x', 'https://metadata.google.internal/computeMetadata/v1/',
  ]) await refused({ ...base, url }, 'url', /loopback, private, link-local or metadata/);
  await refused({ ...base, url: 'https://no-such-host.invalid/x' }, 'url', /does not resolve/);

  const endpoint = (await call(env, 'POST', '/webhook-endpoints', { token, body: base })).json();
  t.match(endpoint, { url: 'https://8.8.8.8/hook' }, 'a public address is accepted');
  const patch = await call(env, 'PATCH', `/webhook-endpoints/${endpoint.id}`, { token, body: { url: 'https://127.0.0.1/x' } });
  t.equal(patch.statusCode, 422, 'the guard applies on update too');
  t.equal((await env.deps.db('webhook_endpoints').where({ tenant_id: tenant.id })).length, 1, 'only the valid endpoint was stored');
  t.equal((await call(env, 'GET', `/webhook-endpoints/${endpoint.id}`, { token })).json().url, 'https://8.8.8.8/hook', 'the refused update changed nothing');
});

t.test('agents do not hold the webhook_endpoints scopes', async (t) => {
  const keys = licenseKeys();
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem, webhooksAllowPrivate: true });
  const tenant = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  const agent = await userFixture(env, tenant.id, 'agent');
  const res = await call(env, 'GET', '/webhook-endpoints', { token: agent.token });
  t.equal(res.statusCode, 403);
  t.match(res.json(), { code: 'insufficient_scope', details: { required_scope: 'webhook_endpoints:read' } });
});

t.test('delivery history pages by cursor; the test ping is signed and reports the answer', async (t) => {
  const keys = licenseKeys();
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem, webhooksAllowPrivate: true });
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  const receiver = await startReceiver(t);
  const token = tenant.admin.token;
  const endpoint = (await call(env, 'POST', '/webhook-endpoints', { token, body: { name: 'r', url: receiver.url, events: ['ticket.status_changed'] } })).json();

  const now = new Date();
  for (let i = 0; i < 5; i++) {
    await inTransaction(env.deps, { tenantId: tenant.id, actor: SYSTEM_ACTOR, now: new Date(now.getTime() + i) }, (ctx) =>
      emitTicketChange(ctx, 'ticket.status_changed', { ticketId: endpoint.id, from: 'Open', to: `S${i}` }));
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: Record<string, string> = { page_size: '2', ...(cursor ? { cursor } : {}) };
    const page = await call(env, 'GET', `/webhook-endpoints/${endpoint.id}/deliveries`, { token, query: cursor ? { cursor, page_size: '2' } : query });
    t.equal(page.statusCode, 200, page.body);
    seen.push(...page.json().data.map((d: { delivery_id: string }) => d.delivery_id));
    cursor = page.json().meta.next_cursor;
    pages++;
  } while (cursor && pages < 10);
  t.equal(pages, 3);
  t.equal(new Set(seen).size, 5, 'every delivery once, none repeated');
  const pending = await call(env, 'GET', `/webhook-endpoints/${endpoint.id}/deliveries`, { token, query: { status: 'pending' } });
  t.equal(pending.json().data.length, 5);
  t.equal((await call(env, 'GET', `/webhook-endpoints/${endpoint.id}/deliveries`, { token: other.admin.token })).statusCode, 404, 'another tenant: 404');

  await runJob(env.deps, 'webhook-dispatch', { now: new Date(now.getTime() + 1000) });
  t.equal(receiver.received.length, 5);

  const ping = await call(env, 'POST', `/webhook-endpoints/${endpoint.id}/test`, { token });
  t.equal(ping.statusCode, 200, ping.body);
  t.match(ping.json(), { delivered: true, status_code: 200, error: null });
  const got = receiver.received.at(-1)!;
  t.same(Object.keys(got.json), ['id', 'event', 'created_at', 'tenant_id', 'data']);
  t.match(got.json, { event: 'ping', tenant_id: tenant.id, data: { endpoint_id: endpoint.id } });
  t.equal(got.headers['x-helpdesk-event'], 'ping');
  const secret = (await call(env, 'POST', `/webhook-endpoints/${endpoint.id}/regenerate-secret`, { token })).json().secret;
  await call(env, 'POST', `/webhook-endpoints/${endpoint.id}/test`, { token });
  const signed = receiver.received.at(-1)!;
  t.equal(signed.headers['x-helpdesk-signature'], `sha256=${createHmac('sha256', secret).update(signed.raw).digest('hex')}`);

  receiver.answer = () => ({ status: 500 });
  const failing = await call(env, 'POST', `/webhook-endpoints/${endpoint.id}/test`, { token });
  t.match(failing.json(), { delivered: false, status_code: 500, error: 'HTTP 500' });
  await receiver.close();
  const down = await call(env, 'POST', `/webhook-endpoints/${endpoint.id}/test`, { token });
  t.match(down.json(), { delivered: false, status_code: null, error: /ECONNREFUSED/ });
  t.equal((await env.deps.db('webhook_deliveries').where({ tenant_id: tenant.id })).length, 5, 'pings leave no delivery rows');
});
