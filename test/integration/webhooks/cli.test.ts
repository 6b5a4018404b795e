import t from 'tap';
import type { AddressInfo } from 'node:net';
import { call, testApp, tenantFixture } from '../../helpers/app.js';
import { runCommand, tempDataDir } from '../../helpers/cli.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { startReceiver } from '../../helpers/webhook-receiver.js';
import { SYSTEM_ACTOR } from '../../../src/core/context.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { emitTicketChange } from '../../../src/events/emit/ticket-change.js';
import WebhooksRetry from '../../../commands/webhooks/retry.js';
import JobsRun from '../../../commands/jobs/run.js';

/** `helpdesk webhooks retry` locally and through the API, and the ladder driven by `jobs run --now`. */
t.test('webhooks retry and jobs run webhook-dispatch', async (t) => {
  const keys = licenseKeys();
  const app = await testApp(t, { licensePublicKey: keys.publicKeyPem, webhooksAllowPrivate: true });
  const tenant = await tenantFixture(app);
  await grantLicense(app, tenant.id, keys);
  const receiver = await startReceiver(t);
  receiver.answer = () => ({ status: 500 });
  const env = {
    DATABASE_URL: app.databaseUrl, HELPDESK_DATA_DIR: tempDataDir(t), HELPDESK_SECRET_KEY: 'test-secret-key', LOG_LEVEL: 'silent',
    HELPDESK_WEBHOOKS_ALLOW_PRIVATE: '1',
  };
  const endpoint = (await call(app, 'POST', '/webhook-endpoints', { token: tenant.admin.token, body: { name: 'r', url: receiver.url, events: ['ticket.status_changed'] } })).json();
  const t0 = new Date('2026-11-23T09:00:00.000Z');
  for (const to of ['A', 'B']) {
    await inTransaction(app.deps, { tenantId: tenant.id, actor: SYSTEM_ACTOR, now: t0 }, (ctx) => emitTicketChange(ctx, 'ticket.status_changed', { ticketId: endpoint.id, from: 'Open', to }));
  }

  // The whole ladder through the CLI at simulated times: 0, +1, +6, +36, +156, +516 minutes.
  for (const minutes of [0, 1, 6, 36, 156, 516]) {
    const now = new Date(t0.getTime() + minutes * 60_000).toISOString();
    const run = await runCommand(JobsRun, ['webhook-dispatch', '--now', now, '--json'], env);
    t.equal(run.code, 0, run.stderr);
    t.match(run.json(), { name: 'webhook-dispatch', status: 'succeeded', simulated_now: now, result: { attempted: 2 } }, `+${minutes} min`);
  }
  t.equal(receiver.received.length, 12);
  const dead = await app.deps.db('webhook_deliveries').where({ tenant_id: tenant.id, status: 'dead' }).orderBy('id');
  t.equal(dead.length, 2, 'both dead after the ladder');

  receiver.answer = () => ({ status: 200 });
  const one = await runCommand(WebhooksRetry, ['--delivery', dead[0].id, '--tenant', tenant.slug, '--json'], env);
  t.equal(one.code, 0, one.stderr);
  t.same(one.json(), { retried: 1, delivery_ids: [dead[0].id] });
  const again = await runCommand(WebhooksRetry, ['--delivery', dead[0].id, '--tenant', tenant.slug, '--json'], env);
  t.equal(again.code, 5, 'a pending delivery: conflict');
  t.equal(again.json().error.code, 'conflict');
  const unknown = await runCommand(WebhooksRetry, ['--delivery', 'nope', '--tenant', tenant.slug], env);
  t.equal(unknown.code, 3);
  t.match(unknown.stderr, /^Error \(resource_not_found\)/);
  const missing = await runCommand(WebhooksRetry, ['--tenant', tenant.slug, '--json'], env);
  t.equal(missing.code, 2);

  // Through the REST API: the endpoint's dead deliveries (the other one).
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  const apiUrl = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
  const remote = await runCommand(WebhooksRetry, ['--endpoint', endpoint.id, '--status', 'dead', '--api-url', apiUrl, '--token', tenant.admin.token, '--json'], env);
  t.equal(remote.code, 0, remote.stdout + remote.stderr);
  t.same(remote.json(), { retried: 1, delivery_ids: [dead[1].id] });
  const remoteOne = await runCommand(WebhooksRetry, ['--delivery', dead[1].id, '--api-url', apiUrl, '--token', tenant.admin.token, '--json'], env);
  t.equal(remoteOne.code, 5, 'already pending: the same conflict remotely');
  const text = await runCommand(WebhooksRetry, ['--endpoint', endpoint.id, '--status', 'failed', '--tenant', tenant.slug], env);
  t.equal(text.stdout, '0 deliveries back to pending\n');

  const run = await runCommand(JobsRun, ['webhook-dispatch', '--json'], env);
  t.match(run.json().result, { attempted: 2, delivered: 2 });
  t.equal((await app.deps.db('webhook_deliveries').where({ tenant_id: tenant.id, status: 'delivered' })).length, 2);
  const audit = await app.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'webhook_delivery.retried' });
  t.equal(audit.length, 2);
});
