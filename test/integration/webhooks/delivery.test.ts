import t, { type Test } from 'tap';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { call, testApp, tenantFixture, type TestEnv, type TenantFixture } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver.js';
import { SYSTEM_ACTOR } from '../../../src/core/context.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { emitTicketChange } from '../../../src/events/emit/ticket-change.js';
import { runJob } from '../../../src/jobs/runner.js';
import { Dispatcher } from '../../../src/webhooks/dispatcher.js';
import { WebhookSender } from '../../../src/webhooks/sender.js';

/** Deliveries to a real receiver on loopback: signature, headers, ladder, statuses, retries, rollback. */
const T0 = new Date('2026-11-23T10:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const MIN = 60_000;

async function setup(t: Test) {
  const keys = licenseKeys();
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem, webhooksAllowPrivate: true });
  const tenant = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  const receiver = await startReceiver(t);
  return { env, tenant, receiver };
}

async function createEndpoint(env: TestEnv, tenant: TenantFixture, receiver: Receiver, extra: Record<string, unknown> = {}) {
  const res = await call(env, 'POST', '/webhook-endpoints', {
    token: tenant.admin.token,
    body: { name: 'Receiver', url: receiver.url, events: ['ticket.status_changed'], headers: { 'X-Receiver-Token': 'r-123' }, ...extra },
  });
  if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}: ${res.body}`);
  return res.json() as { id: string; secret: string };
}

/** One committed status change of a (pretend) ticket: its event and the outbox rows. */
async function statusChange(env: TestEnv, tenant: TenantFixture, now = T0, to = 'Pending') {
  const ticketId = '0193a000-0000-7000-8000-000000000001';
  await inTransaction(env.deps, { tenantId: tenant.id, actor: SYSTEM_ACTOR, now }, (ctx) => emitTicketChange(ctx, 'ticket.status_changed', { ticketId, from: 'Open', to }));
}

const dispatch = (env: TestEnv, now: Date) => runJob(env.deps, 'webhook-dispatch', { now });

async function deliveries(env: TestEnv, tenant: TenantFixture, endpointId: string) {
  const res = await call(env, 'GET', `/webhook-endpoints/${endpointId}/deliveries`, { token: tenant.admin.token });
  return res.json().data as Array<Record<string, any>>;
}

function verify(secret: string, raw: Buffer, header: string | string[] | undefined): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
  const given = Buffer.from(String(header));
  return expected.length === given.length && timingSafeEqual(expected, given);
}

t.test('a committed change reaches the receiver signed, with the contract envelope and headers', async (t) => {
  const { env, tenant, receiver } = await setup(t);
  const endpoint = await createEndpoint(env, tenant, receiver);
  await statusChange(env, tenant);
  const run = await dispatch(env, T0);
  t.match(run.result, { attempted: 1, delivered: 1 });
  t.equal(receiver.received.length, 1);
  const got = receiver.received[0]!;
  t.ok(verify(endpoint.secret, got.raw, got.headers['x-helpdesk-signature']), 'HMAC-SHA256 of the raw body under the whole whsec_ secret');
  t.equal(got.headers['content-type'], 'application/json');
  t.equal(got.headers['x-helpdesk-event'], 'ticket.status_changed');
  t.match(got.headers['x-helpdesk-delivery-id'], /^[0-9a-f-]{36}$/);
  t.equal(got.headers['x-receiver-token'], 'r-123', 'static header sent verbatim');
  t.same(Object.keys(got.json), ['id', 'event', 'created_at', 'tenant_id', 'data']);
  t.match(got.json, {
    event: 'ticket.status_changed', created_at: T0.toISOString(), tenant_id: tenant.id,
    data: { ticket_id: '0193a000-0000-7000-8000-000000000001', from: 'Open', to: 'Pending', actor_id: null, actor_name: 'System' },
  });
  const event = await env.deps.db('events').where({ tenant_id: tenant.id }).first();
  t.equal(got.json.id, event.id, 'the envelope id is the event id');

  const [row] = await deliveries(env, tenant, endpoint.id);
  t.match(row, { event_id: event.id, event: 'ticket.status_changed', status: 'delivered', attempt: 1, status_code: 200, error: null, next_attempt_at: null });
  t.equal(row!.attempt_id, got.headers['x-helpdesk-delivery-id'], 'the log names the attempt the receiver saw');
  t.type(row!.latency_ms, 'number');
  t.ok(row!.delivered_at);

  // Nothing left: another run sends nothing again.
  t.match((await dispatch(env, at(10 * MIN))).result, { attempted: 0 });
  t.equal(receiver.received.length, 1);
  t.same(env.guard.violations, []);
});

t.test('every step of the retry ladder, then dead; a manual retry starts afresh', async (t) => {
  const { env, tenant, receiver } = await setup(t);
  receiver.answer = () => ({ status: 503 });
  const endpoint = await createEndpoint(env, tenant, receiver);
  await statusChange(env, tenant);

  const ladder = [0, 1, 5, 30, 120, 360].map((m) => m * MIN);
  let clock = 0;
  for (const [i, delay] of ladder.entries()) {
    clock += delay;
    if (delay > 0) {
      t.match((await dispatch(env, at(clock - 1000))).result, { attempted: 0 }, `attempt ${i + 1} not before its time`);
    }
    const run = await dispatch(env, at(clock));
    t.match(run.result, { attempted: 1 }, `attempt ${i + 1} at +${clock / MIN} min`);
    const [row] = await deliveries(env, tenant, endpoint.id);
    if (i < 5) {
      t.match(row, { status: 'failed', attempt: i + 1, status_code: 503, error: 'HTTP 503', next_attempt_at: at(clock + ladder[i + 1]!).toISOString() });
    } else {
      t.match(row, { status: 'dead', attempt: 6, next_attempt_at: null }, 'dead after the fifth retry fails');
    }
  }
  t.equal(receiver.received.length, 6);
  t.equal(new Set(receiver.received.map((r) => r.json.id)).size, 1, 'the same event id on every attempt');
  t.equal(new Set(receiver.received.map((r) => r.headers['x-helpdesk-delivery-id'])).size, 6, 'a new delivery id per attempt');
  t.match((await dispatch(env, at(clock + 24 * 60 * MIN))).result, { attempted: 0 }, 'a dead delivery is not retried by itself');

  // Manual retry: back to pending, attempted at once, fresh ladder.
  receiver.answer = () => ({ status: 200 });
  const [dead] = await deliveries(env, tenant, endpoint.id);
  const retried = await call(env, 'POST', `/webhook-endpoints/${endpoint.id}/deliveries/${dead!.delivery_id}/retry`, { token: tenant.admin.token });
  t.equal(retried.statusCode, 200, retried.body);
  t.match(retried.json(), { status: 'pending', attempt: 0 });
  const again = await call(env, 'POST', `/webhook-endpoints/${endpoint.id}/deliveries/${dead!.delivery_id}/retry`, { token: tenant.admin.token });
  t.equal(again.statusCode, 409, 'a pending delivery cannot be retried');
  t.equal(again.json().code, 'conflict');
  await dispatch(env, new Date());
  const [done] = await deliveries(env, tenant, endpoint.id);
  t.match(done, { status: 'delivered', attempt: 1, status_code: 200 });
  t.equal(receiver.received.at(-1)!.json.id, receiver.received[0]!.json.id);
  const audit = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'webhook_delivery.retried' });
  t.equal(audit.length, 1, 'the manual retry is audited');
  const conflictOnDelivered = await call(env, 'POST', `/webhook-deliveries/${dead!.delivery_id}/retry`, { token: tenant.admin.token });
  t.equal(conflictOnDelivered.statusCode, 409, 'a delivered delivery is not retried');
});

t.test('only 2xx is success: 3xx is not followed, 4xx and 5xx fail, a time-out fails', async (t) => {
  const { env, tenant, receiver } = await setup(t);
  const endpoint = await createEndpoint(env, tenant, receiver);
  const answers: Record<string, ReturnType<Receiver['answer']>> = {
    A: { status: 204 },
    B: { status: 302, headers: { location: `${receiver.url}/elsewhere` } },
    C: { status: 410 },
    D: { status: 500 },
    E: 'hang',
  };
  receiver.answer = (r) => answers[String(r.json.data?.to)] ?? { status: 200 };
  for (const to of Object.keys(answers)) await statusChange(env, tenant, T0, to);

  // A short time-out for the test; the production value is 10 s (ATTEMPT_TIMEOUT_MS).
  const sender = new WebhookSender({ allowPrivate: true, timeoutMs: 400 });
  const dispatcher = new Dispatcher(env.deps, { sender });
  t.teardown(() => sender.close());
  const totals = await dispatcher.drain(() => T0);
  t.same(totals, { attempted: 5, delivered: 1, failed: 4, dead: 0 });
  t.equal(receiver.received.filter((r) => r.path.endsWith('/elsewhere')).length, 0, 'the redirect was not followed');

  const rows = await env.deps.db('webhook_deliveries as d').join('events as e', function () {
    this.on('e.tenant_id', 'd.tenant_id').andOn('e.id', 'd.event_id');
  }).where('d.tenant_id', tenant.id).select('d.*', env.deps.db.raw("e.data->>'to' as to"));
  const byTo = Object.fromEntries(rows.map((r: any) => [r.to, r]));
  t.match(byTo.A, { status: 'delivered', status_code: 204 });
  t.match(byTo.B, { status: 'failed', status_code: 302, error: 'HTTP 302' });
  t.match(byTo.C, { status: 'failed', status_code: 410 });
  t.match(byTo.D, { status: 'failed', status_code: 500 });
  t.match(byTo.E, { status: 'failed', status_code: null, error: 'timed out after 0.4 s' });
  t.ok(byTo.E.latency_ms >= 380, 'the time-out is measured');
  t.same(env.guard.violations, []);
  void endpoint;
});

t.test('a rolled-back change sends nothing; inactive or unsubscribed endpoints get nothing', async (t) => {
  const { env, tenant, receiver } = await setup(t);
  const subscribed = await createEndpoint(env, tenant, receiver);
  await createEndpoint(env, tenant, receiver, { active: false });
  await createEndpoint(env, tenant, receiver, { events: ['ticket.created'] });

  await t.rejects(inTransaction(env.deps, { tenantId: tenant.id, actor: SYSTEM_ACTOR, now: T0 }, async (ctx) => {
    await emitTicketChange(ctx, 'ticket.status_changed', { ticketId: subscribed.id, from: 'Open', to: 'Closed' });
    throw new Error('the change fails after its event');
  }));
  t.equal((await env.deps.db('webhook_deliveries').where({ tenant_id: tenant.id })).length, 0, 'no outbox row survives the rollback');
  await dispatch(env, at(MIN));
  t.equal(receiver.received.length, 0, 'nothing sent');

  await statusChange(env, tenant);
  const rows = await env.deps.db('webhook_deliveries').where({ tenant_id: tenant.id });
  t.same(rows.map((r: any) => r.endpoint_id), [subscribed.id], 'one row: the active endpoint subscribed to the event');
  // Written by the statement that stored the event: in its transaction, the same command id.
  await inTransaction(env.deps, { tenantId: tenant.id, actor: SYSTEM_ACTOR, now: T0 }, async (ctx) => {
    await emitTicketChange(ctx, 'ticket.status_changed', { ticketId: subscribed.id, from: 'Pending', to: 'Open' });
    const commands = async (table: string) => (await ctx.trx(table).where({ tenant_id: tenant.id }).whereRaw('xmin = pg_current_xact_id()::xid')
      .select(ctx.trx.raw('cmin::text AS c'))).map((row: { c: string }) => row.c);
    const [eventCommand] = await commands('events');
    t.same(await commands('webhook_deliveries'), [eventCommand], 'the delivery was written by the event\'s own INSERT');
  });
  await env.deps.db('webhook_deliveries').where({ tenant_id: tenant.id }).whereNot({ id: rows[0].id }).delete();
  await dispatch(env, at(MIN));
  t.equal(receiver.received.length, 1);
});

t.test('a paused endpoint keeps its queue and delivers it when re-activated; a deleted one drops it', async (t) => {
  const { env, tenant, receiver } = await setup(t);
  const endpoint = await createEndpoint(env, tenant, receiver);
  await statusChange(env, tenant);
  await call(env, 'PATCH', `/webhook-endpoints/${endpoint.id}`, { token: tenant.admin.token, body: { active: false } });
  t.match((await dispatch(env, at(MIN))).result, { attempted: 0 });
  await call(env, 'PATCH', `/webhook-endpoints/${endpoint.id}`, { token: tenant.admin.token, body: { active: true } });
  t.match((await dispatch(env, at(MIN))).result, { attempted: 1, delivered: 1 });

  await statusChange(env, tenant);
  const del = await call(env, 'DELETE', `/webhook-endpoints/${endpoint.id}`, { token: tenant.admin.token });
  t.equal(del.statusCode, 204);
  t.equal((await env.deps.db('webhook_deliveries').where({ tenant_id: tenant.id })).length, 0, 'its deliveries went with it');
  t.match((await dispatch(env, at(MIN))).result, { attempted: 0 });
});

t.test('a rotated secret signs the next attempt', async (t) => {
  const { env, tenant, receiver } = await setup(t);
  const endpoint = await createEndpoint(env, tenant, receiver);
  const rotated = await call(env, 'POST', `/webhook-endpoints/${endpoint.id}/regenerate-secret`, { token: tenant.admin.token });
  t.equal(rotated.statusCode, 200);
  const secret = rotated.json().secret as string;
  t.match(secret, /^whsec_[0-9a-f]{64}$/);
  t.not(secret, endpoint.secret);
  await statusChange(env, tenant);
  await dispatch(env, T0);
  const got = receiver.received[0]!;
  t.ok(verify(secret, got.raw, got.headers['x-helpdesk-signature']), 'signed with the new secret');
  t.notOk(verify(endpoint.secret, got.raw, got.headers['x-helpdesk-signature']), 'not with the old one');
});

t.test('the SSRF guard runs again at every connection: a name that resolves to loopback is refused', async (t) => {
  const { env, tenant, receiver } = await setup(t);
  const port = new URL(receiver.url).port;
  // Registered while private targets were allowed (or before a DNS change): the connection still checks.
  await createEndpoint(env, tenant, receiver, { url: `http://localhost:${port}/hook` });
  await createEndpoint(env, tenant, receiver, { url: `http://127.0.0.1:${port}/hook` });
  await createEndpoint(env, tenant, receiver, { url: `http://[::ffff:127.0.0.1]:${port}/hook` });
  await statusChange(env, tenant);
  const sender = new WebhookSender({ allowPrivate: false });
  t.teardown(() => sender.close());
  const totals = await new Dispatcher(env.deps, { sender }).drain(() => T0);
  t.same(totals, { attempted: 3, delivered: 0, failed: 3, dead: 0 });
  t.equal(receiver.received.length, 0, 'no request reached the loopback receiver');
  const errors = (await env.deps.db('webhook_deliveries').where({ tenant_id: tenant.id }).pluck('error')).sort();
  t.match(errors, [/^refused: (127\.0\.0\.1|::ffff:7f00:1|::ffff:127\.0\.0\.1) is a non-public address$/, /^refused: (127\.0\.0\.1|::ffff:7f00:1|::ffff:127\.0\.0\.1) is a non-public address$/, /^refused: localhost resolves to (127\.0\.0\.1|::1)/]);
});
