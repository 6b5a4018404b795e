import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { call, testApp, tenantFixture, type TestEnv, type TenantFixture } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver.js';
import { SYSTEM_ACTOR } from '../../../src/core/context.js';
import { closeDeps, createDeps } from '../../../src/core/deps.js';
import { createLogger } from '../../../src/core/logging.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { emitTicketChange } from '../../../src/events/emit/ticket-change.js';
import { runJob } from '../../../src/jobs/runner.js';
import { Dispatcher, LEASE_MS } from '../../../src/webhooks/dispatcher.js';
import { startDispatchLoop } from '../../../src/webhooks/dispatch-loop.js';
import { WebhookSender } from '../../../src/webhooks/sender.js';

/** Several dispatchers, a dispatcher killed mid-batch, a slow receiver, and the NOTIFY wake-up. */
t.setTimeout(180_000);

async function setup(t: Test) {
  const keys = licenseKeys();
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem, webhooksAllowPrivate: true });
  const tenant = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  return { env, tenant };
}

async function endpointFor(env: TestEnv, tenant: TenantFixture, receiver: Receiver): Promise<string> {
  const res = await call(env, 'POST', '/webhook-endpoints', { token: tenant.admin.token, body: { name: 'r', url: receiver.url, events: ['ticket.status_changed'] } });
  return res.json().id;
}

/** `count` committed events in one transaction each (`to` = their index). */
async function events(env: TestEnv, tenant: TenantFixture, count: number, now = new Date()): Promise<void> {
  for (let i = 0; i < count; i++) {
    await inTransaction(env.deps, { tenantId: tenant.id, actor: SYSTEM_ACTOR, now }, (ctx) =>
      emitTicketChange(ctx, 'ticket.status_changed', { ticketId: tenant.id, from: 'Open', to: String(i) }));
  }
}

const statuses = async (env: TestEnv, tenant: TenantFixture) =>
  Object.fromEntries((await env.deps.db('webhook_deliveries').where({ tenant_id: tenant.id }).groupBy('status').select('status').count('* as n')).map((r: any) => [r.status, Number(r.n)]));

t.test('two dispatchers on their own connections never send one attempt twice', async (t) => {
  const { env, tenant } = await setup(t);
  const receiver = await startReceiver(t);
  receiver.answer = () => ({ status: 200, delayMs: 2 });
  await endpointFor(env, tenant, receiver);
  await events(env, tenant, 300);

  const other = createDeps(env.config, env.databaseUrl, { log: createLogger('silent'), poolMax: 5 });
  t.teardown(() => closeDeps(other));
  const now = new Date(Date.now() + 1000);
  const a = new Dispatcher(env.deps, { batchSize: 20, concurrency: 32, perEndpoint: 32 });
  const b = new Dispatcher(other, { batchSize: 20, concurrency: 32, perEndpoint: 32 });
  const [ta, tb] = await Promise.all([a.drain(() => now), b.drain(() => now)]);
  await Promise.all([a.close(), b.close()]);
  t.equal(ta.attempted + tb.attempted, 300, `split ${ta.attempted} / ${tb.attempted}`);
  t.ok(ta.attempted > 0 && tb.attempted > 0, 'both took part');
  t.equal(receiver.received.length, 300, 'exactly one request per delivery');
  t.equal(new Set(receiver.received.map((r) => r.json.id)).size, 300, 'every event once');
  t.same(await statuses(env, tenant), { delivered: 300 });
  t.same(env.guard.violations, []);
});

t.test('a dispatcher killed with SIGKILL mid-batch loses nothing: the lease runs out and the same events go again', async (t) => {
  const { env, tenant } = await setup(t);
  const receiver = await startReceiver(t);
  // Even events are answered at once, odd ones hang: the kill comes between their send and record.
  receiver.answer = (r) => (Number(r.json.data.to) % 2 === 0 ? { status: 200 } : 'hang');
  await endpointFor(env, tenant, receiver);
  await events(env, tenant, 20);

  const script = fileURLToPath(new URL('../../fixtures/webhooks/dispatcher-child.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script], { env: { ...process.env, DATABASE_URL: env.databaseUrl }, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  await receiver.waitFor(20, 30_000);
  for (let i = 0; i < 200 && (await statuses(env, tenant)).delivered !== 10; i++) await new Promise((r) => setTimeout(r, 25));
  child.kill('SIGKILL');
  t.equal(await exited, 'SIGKILL');
  t.same(await statuses(env, tenant), { delivered: 10, pending: 10 }, 'the answered half recorded, the hanging half still claimed');

  receiver.answer = () => ({ status: 200 });
  const early = await runJob(env.deps, 'webhook-dispatch', { now: new Date() });
  t.match(early.result, { attempted: 0 }, 'nobody takes a claimed row before its lease runs out');
  const later = await runJob(env.deps, 'webhook-dispatch', { now: new Date(Date.now() + LEASE_MS + 1000) });
  t.match(later.result, { attempted: 10, delivered: 10 });
  t.same(await statuses(env, tenant), { delivered: 20 }, 'every event delivered');
  const resent = receiver.received.slice(20);
  t.same(resent.map((r) => Number(r.json.data.to) % 2).sort(), Array(10).fill(1), 'only the unrecorded ones went again');
  const firstIds = new Set(receiver.received.slice(0, 20).map((r) => r.json.id));
  t.ok(resent.every((r) => firstIds.has(r.json.id)), 'with the same event ids (at-least-once)');
  t.equal(new Set(receiver.received.map((r) => r.headers['x-helpdesk-delivery-id'])).size, 30, 'each attempt has its own delivery id');
});

t.test('a slow receiver holds only its own slots', async (t) => {
  const { env, tenant } = await setup(t);
  const slow = await startReceiver(t, '/slow');
  const fast = await startReceiver(t, '/fast');
  slow.answer = () => 'hang';
  await endpointFor(env, tenant, slow);
  await endpointFor(env, tenant, fast);
  await events(env, tenant, 12);

  const sender = new WebhookSender({ allowPrivate: true, timeoutMs: 1000 });
  t.teardown(() => sender.close());
  const started = Date.now();
  const run = new Dispatcher(env.deps, { sender, perEndpoint: 4, concurrency: 16, batchSize: 16 }).drain(() => new Date(started + 1000));
  await fast.waitFor(12, 5000);
  t.ok(Date.now() - started < 1000, `all 12 fast deliveries arrived in ${Date.now() - started} ms, before the slow receiver's first time-out`);
  t.ok(slow.received.length <= 4, `at most 4 attempts in flight to the slow one (${slow.received.length})`);
  const totals = await run;
  t.match(totals, { delivered: 12, failed: 12 });
});

t.test('serve dispatches on the commit NOTIFY, and a manual retry wakes it too', async (t) => {
  const { env, tenant } = await setup(t);
  const receiver = await startReceiver(t);
  const endpoint = await endpointFor(env, tenant, receiver);
  // The poll is an hour: only a NOTIFY can wake the loop within this test.
  const loop = await startDispatchLoop(env.deps, { databaseUrl: env.databaseUrl, pollMs: 3_600_000 });
  t.teardown(() => loop.stop());
  await loop.idle();

  const committed = Date.now();
  await events(env, tenant, 1);
  await receiver.waitFor(1, 3000);
  t.ok(receiver.received[0]!.at - committed < 1000, `delivered ${receiver.received[0]!.at - committed} ms after commit`);

  receiver.answer = () => ({ status: 500 });
  await events(env, tenant, 1);
  await receiver.waitFor(2, 3000);
  await loop.idle();
  const failed = await env.deps.db('webhook_deliveries').where({ tenant_id: tenant.id, status: 'failed' }).first();
  t.ok(failed, 'the failing one waits for its retry');
  receiver.answer = () => ({ status: 200 });
  const retry = await call(env, 'POST', `/webhook-endpoints/${endpoint}/deliveries/${failed.id}/retry`, { token: tenant.admin.token });
  t.equal(retry.statusCode, 200);
  await receiver.waitFor(3, 3000);
  await loop.idle();
  t.same(await statuses(env, tenant), { delivered: 2 });
});
