import t from 'tap';
import { call, testApp, tenantFixture } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { openTicket, vocab } from '../../helpers/tickets.js';

/**
 * Creates and replies read SLA policies, webhook subscriptions and mail settings through the
 * per-process configuration cache (src/db/config-cache.ts). It must never be stale: a change made
 * through the API, by plain SQL, or still uncommitted in another transaction is seen exactly when
 * the database would show it.
 */
t.test('the configuration cache follows every change exactly', async (t) => {
  const keys = licenseKeys();
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem, webhooksAllowPrivate: true });
  const tenant = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  const token = tenant.admin.token;
  const db = env.deps.db;
  const deliveriesOf = async (ticketId: string) => Number((await db('webhook_deliveries as d')
    .join('events as e', function () { this.on('e.tenant_id', '=', 'd.tenant_id').andOn('e.id', '=', 'd.event_id'); })
    .where({ 'd.tenant_id': tenant.id, 'e.ticket_id': ticketId }).count({ n: '*' }))[0]!.n);
  const open = () => openTicket(env, token, { requester: { email: 'pat@example.com' } });
  const version = async () => (await db('tenant_config_versions').where({ tenant_id: tenant.id }).first('version'))?.version ?? '0';

  // Warm the cache: no endpoint yet.
  const first = await open();
  t.equal(await deliveriesOf(first.id), 0, 'no endpoint, no delivery');

  // A change through the API.
  const before = await version();
  const endpoint = (await call(env, 'POST', '/webhook-endpoints', { token, body: { name: 'r', url: 'http://127.0.0.1:9/hook', events: ['ticket.created'] } })).json();
  t.not(await version(), before, 'the API change bumped the version');
  const second = await open();
  t.equal(await deliveriesOf(second.id), 1, 'the new endpoint is seen at once');

  // A change by plain SQL, still uncommitted: the create goes on with what is committed.
  const trx = await db.transaction();
  await trx('webhook_endpoints').where({ tenant_id: tenant.id, id: endpoint.id }).update({ active: false });
  const during = await open();
  t.equal(await deliveriesOf(during.id), 1, 'an uncommitted change is not seen');
  await trx.commit();
  const after = await open();
  t.equal(await deliveriesOf(after.id), 0, 'the committed change is seen by the next create');

  // A rolled-back change leaves the version (and the cache) as they were.
  const kept = await version();
  await db.transaction(async (trx2) => {
    await trx2('webhook_endpoints').where({ tenant_id: tenant.id, id: endpoint.id }).update({ active: true });
    await trx2.rollback();
  }).catch(() => undefined);
  t.equal(await version(), kept, 'a rolled-back change does not bump');
  const stillOff = await open();
  t.equal(await deliveriesOf(stillOff.id), 0);

  // SLA policy: the first-response target follows a PATCH and a plain UPDATE.
  const { priority } = await vocab(env, token);
  const dueIn = (ticket: { created_at: string; sla: { first_response: { due_at: string | null } } }) =>
    (Date.parse(ticket.sla.first_response.due_at!) - Date.parse(ticket.created_at)) / 60_000;
  const patched = await call(env, 'PATCH', `/sla-policies/${priority.normal}`, {
    token, body: { first_response_time_minutes: 30, next_response_time_minutes: 60, resolution_time_minutes: 600, respect_business_hours: false },
  });
  t.equal(patched.statusCode, 200, patched.body);
  const sla1 = await open();
  t.equal(dueIn(sla1), 30, 'the patched policy applies');
  await db('sla_policies').where({ tenant_id: tenant.id, priority_id: priority.normal }).update({ first_response_time_minutes: 45 });
  const sla2 = await open();
  t.equal(dueIn(sla2), 45, 'a plain UPDATE applies to the next create');

  // A reply after a change of the business hours reads them again (the row is rewritten by SQL).
  const reply = await call(env, 'POST', `/tickets/${sla2.id}/messages`, { token, body: { body: 'On it', is_private: false } });
  t.equal(reply.statusCode, 201, reply.body);

  // A reply pins the version with its ticket's lock (one statement): a reply after a change sees it.
  const replyDeliveries = async (ticketId: string) => Number((await db('webhook_deliveries as d')
    .join('events as e', function () { this.on('e.tenant_id', '=', 'd.tenant_id').andOn('e.id', '=', 'd.event_id'); })
    .where({ 'd.tenant_id': tenant.id, 'e.ticket_id': ticketId, 'e.type': 'ticket.message_created' }).count({ n: '*' }))[0]!.n);
  const answer = async (ticketId: string) => {
    const res = await call(env, 'POST', `/tickets/${ticketId}/messages`, { token, body: { body: 'Noted', is_private: false } });
    t.equal(res.statusCode, 201, res.body);
  };
  t.equal(await replyDeliveries(sla2.id), 0, 'no endpoint takes replies yet');
  const replies = await call(env, 'POST', '/webhook-endpoints', { token, body: { name: 'replies', url: 'http://127.0.0.1:9/replies', events: ['ticket.message_created'] } });
  t.equal(replies.statusCode, 201, replies.body);
  await answer(sla2.id);
  t.equal(await replyDeliveries(sla2.id), 1, 'the reply after the new endpoint is delivered to it');
  await db('webhook_endpoints').where({ tenant_id: tenant.id, id: replies.json().id }).update({ active: false });
  await answer(sla2.id);
  t.equal(await replyDeliveries(sla2.id), 1, 'and the reply after it was switched off by SQL is not');

  // Another tenant's change does not touch this tenant's version.
  const other = await tenantFixture(env);
  const mine = await version();
  await db('holidays').insert({ tenant_id: other.id, id: '0190f000-0000-7000-8000-000000000001', name: 'x', date: '2026-12-25', recurring: true, created_at: new Date(), updated_at: new Date() });
  t.equal(await version(), mine, 'versions are per tenant');
});

/**
 * Custom field definitions are cached under the pinned version too. The share lock on their rows
 * that kept a delete from racing a write is now the configuration lock: a write pins holding it
 * in share mode, a delete takes it exclusively (migrations/20261202040000_custom_fields_config.ts).
 */
t.test('custom field definitions: cached exactly, and a delete never races a write', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const token = tenant.admin.token;
  const db = env.deps.db;
  const create = (values: Record<string, unknown>) => call(env, 'POST', '/tickets', { token, body: { subject: 's', body: 'b', requester: { email: 'pat@example.com' }, ...values } });
  const field = async (key: string, options = ['a', 'b']) => {
    const res = await call(env, 'POST', '/custom-fields', { token, body: { key, label: key, kind: 'select', options } });
    t.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const settled = async (promise: Promise<unknown>) => Promise.race([promise.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 300))]);

  const tier = await field('tier');
  t.equal((await create({ tier: 'a' })).statusCode, 201, 'the cache warmed with the definition');
  t.equal((await call(env, 'PATCH', `/custom-fields/${tier.id}`, { token, body: { options: ['a', 'c'] } })).statusCode, 200);
  t.equal((await create({ tier: 'c' })).statusCode, 201, 'an option added through the API is accepted at once');
  const removed = await create({ tier: 'b' });
  t.equal(removed.statusCode, 422);
  t.match(removed.json().details, [{ field: 'custom_fields.tier', message: 'must be one of a, c' }], 'and a removed one refused');
  await db('custom_fields').where({ tenant_id: tenant.id, id: tier.id }).update({ active: false });
  const retired = await create({ tier: 'a' });
  t.equal(retired.statusCode, 422, 'a field retired by plain SQL takes no new value at the next create');
  t.match(retired.json().details, [{ field: 'custom_fields.tier', message: /retired/ }]);

  // A write that pinned the configuration (as every create does first) holds the lock in share
  // mode: the delete waits for it, then finds the value it wrote and refuses.
  const spare = await field('spare');
  const writer = await db.transaction();
  await writer.raw('SELECT config_version_for_write(?)', [tenant.id]);
  const ticket = (await create({})).json();
  const deleting = call(env, 'DELETE', `/custom-fields/${spare.id}`, { token });
  t.notOk(await settled(deleting), 'the delete waits for the write that pinned before it');
  await writer('tickets').where({ tenant_id: tenant.id, id: ticket.id }).update({ custom_fields: { spare: 'a' } });
  await writer.commit();
  const refused = await deleting;
  t.equal(refused.statusCode, 409, refused.body);
  t.equal(refused.json().details.reason, 'in_use', "and then sees the write's value");

  // A delete in progress holds the lock exclusively: a create pinning meanwhile waits, then reads
  // the version the delete committed, and the deleted key is unknown to it.
  const gone = await field('gone');
  t.equal((await create({ gone: 'a' })).statusCode, 201, 'the definition is cached');
  await db('tickets').where({ tenant_id: tenant.id }).update({ custom_fields: db.raw("custom_fields - 'gone'") });
  const change = await db.transaction();
  await change.raw('SELECT config_lock_for_change(?)', [tenant.id]);
  await change('custom_fields').where({ tenant_id: tenant.id, id: gone.id }).delete();
  const creating = create({ gone: 'a' });
  t.notOk(await settled(creating), 'a create waits while a change holds the lock');
  await change.commit();
  const late = await creating;
  t.equal(late.statusCode, 422, late.body);
  t.match(late.json().details, [{ field: 'custom_fields.gone', message: 'is not a custom field' }], 'it read the definitions the delete left');
  t.equal(Number((await db('tickets').where({ tenant_id: tenant.id }).whereRaw("custom_fields \\? 'gone'").count({ n: '*' }))[0]!.n), 0, 'no value of the deleted field anywhere');
});
