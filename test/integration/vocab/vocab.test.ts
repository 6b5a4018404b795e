import t from 'tap';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';

/** Statuses, priorities, ticket types and custom fields (SPEC "Configuration", CONTRACT §5). */

const auditRows = (env: TestEnv, tenantId: string, action: string) =>
  env.deps.db('audit_log').where({ tenant_id: tenantId, action }).orderBy('created_at');

t.test('vocabularies', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const admin = tenant.admin.token;

  await t.test('every tenant starts with the default statuses and priorities', async (t) => {
    const statuses = await call(env, 'GET', '/meta/statuses', { token: customer.token });
    t.equal(statuses.statusCode, 200, 'any signed-in user reads them');
    t.same(statuses.json().data.map((s: { key: string; category: string; pauses_sla: boolean }) => [s.key, s.category, s.pauses_sla]), [
      ['new', 'new', false], ['open', 'open', false], ['pending', 'pending', true], ['waiting_on_vendor', 'pending', true],
      ['resolved', 'resolved', false], ['closed', 'closed', false],
    ]);
    t.same(Object.keys(statuses.json().data[0]).sort(), ['category', 'id', 'key', 'name', 'pauses_sla', 'position']);
    const priorities = await call(env, 'GET', '/meta/priorities', { token: agent.token });
    t.same(priorities.json().data.map((p: { key: string }) => p.key), ['urgent', 'high', 'normal', 'low']);
    const others = (await call(env, 'GET', '/meta/statuses', { token: other.admin.token })).json().data;
    t.not(others[0].id, statuses.json().data[0].id, 'each tenant has its own rows');
  });

  await t.test('PATCH /meta/statuses/{id}: admins only, audited, other tenants 404', async (t) => {
    const open = (await call(env, 'GET', '/meta/statuses', { token: admin })).json().data[1];
    const res = await call(env, 'PATCH', `/meta/statuses/${open.id}`, { token: admin, body: { pauses_sla: true, name: 'Open (working)', position: 7 } });
    t.equal(res.statusCode, 200);
    t.match(res.json(), { id: open.id, key: 'open', category: 'open', name: 'Open (working)', pauses_sla: true, position: 7 });
    const [audit] = await auditRows(env, tenant.id, 'status.updated');
    t.match(audit, { resource_id: open.id, changes: { key: 'open', pauses_sla: { from: false, to: true }, name: { from: 'Open', to: 'Open (working)' } } });

    t.equal((await call(env, 'PATCH', `/meta/statuses/${open.id}`, { token: agent.token, body: { pauses_sla: false } })).statusCode, 403);
    t.equal((await call(env, 'PATCH', `/meta/statuses/${open.id}`, { token: other.admin.token, body: { pauses_sla: false } })).statusCode, 404);
    const bad = await call(env, 'PATCH', `/meta/statuses/${open.id}`, { token: admin, body: { name: ' ', category: 'closed', key: 'x' } });
    t.equal(bad.statusCode, 422);
    t.same(bad.json().details.map((d: { field: string }) => d.field).sort(), ['category', 'key', 'name']);
  });

  await t.test('ticket types: CRUD, unique names, audit, in-use refusal', async (t) => {
    const created = await call(env, 'POST', '/ticket-types', { token: admin, body: { name: 'Hardware', description: 'Devices' } });
    t.equal(created.statusCode, 201);
    const type = created.json();
    t.match(type, { name: 'Hardware', description: 'Devices', active: true, position: 0 });
    const dup = await call(env, 'POST', '/ticket-types', { token: admin, body: { name: 'hardware' } });
    t.equal(dup.statusCode, 409);
    t.equal(dup.json().code, 'already_exists');
    t.equal((await call(env, 'POST', '/ticket-types', { token: other.admin.token, body: { name: 'Hardware' } })).statusCode, 201, 'names are per tenant');

    t.equal((await call(env, 'GET', '/ticket-types', { token: agent.token })).json().data.length, 1, 'agents read');
    t.equal((await call(env, 'POST', '/ticket-types', { token: agent.token, body: { name: 'Nope' } })).statusCode, 403, 'agents do not write');
    t.equal((await call(env, 'GET', `/ticket-types/${type.id}`, { token: other.admin.token })).statusCode, 404);

    const patched = await call(env, 'PATCH', `/ticket-types/${type.id}`, { token: admin, body: { name: 'Hardware fault', active: false } });
    t.match(patched.json(), { name: 'Hardware fault', active: false });
    t.match((await auditRows(env, tenant.id, 'ticket_type.updated'))[0], { changes: { name: { from: 'Hardware', to: 'Hardware fault' } } });

    // In use: 409, and the type survives.
    await call(env, 'PATCH', `/ticket-types/${type.id}`, { token: admin, body: { active: true } });
    const ticket = await call(env, 'POST', '/tickets', { token: admin, body: { subject: 's', body: 'b', requester_id: customer.id, type_id: type.id } });
    t.equal(ticket.statusCode, 201);
    const refused = await call(env, 'DELETE', `/ticket-types/${type.id}`, { token: admin });
    t.equal(refused.statusCode, 409);
    t.match(refused.json(), { code: 'conflict', details: { reason: 'in_use' } });
    t.equal((await call(env, 'GET', `/ticket-types/${type.id}`, { token: admin })).statusCode, 200);

    const unused = (await call(env, 'POST', '/ticket-types', { token: admin, body: { name: 'Billing' } })).json();
    t.equal((await call(env, 'DELETE', `/ticket-types/${unused.id}`, { token: other.admin.token })).statusCode, 404);
    t.equal((await call(env, 'DELETE', `/ticket-types/${unused.id}`, { token: admin })).statusCode, 204);
    t.equal((await call(env, 'GET', `/ticket-types/${unused.id}`, { token: admin })).statusCode, 404);
    t.equal((await auditRows(env, tenant.id, 'ticket_type.deleted')).length, 1);
  });

  await t.test('custom fields: kinds, options, reserved keys, fixed key and kind, audit, in-use refusal', async (t) => {
    const select = await call(env, 'POST', '/custom-fields', { token: admin, body: { key: 'plan', label: 'Plan', kind: 'select', options: ['free', 'pro'] } });
    t.equal(select.statusCode, 201);
    t.match(select.json(), { key: 'plan', label: 'Plan', kind: 'select', options: ['free', 'pro'], required: false, active: true });
    t.match((await auditRows(env, tenant.id, 'custom_field.created'))[0], { changes: { key: 'plan', kind: 'select' } });

    const problems = async (body: unknown) => {
      const res = await call(env, 'POST', '/custom-fields', { token: admin, body });
      t.equal(res.statusCode, 422, JSON.stringify(body));
      return res.json().details;
    };
    t.same(await problems({ key: 'size', label: 'Size', kind: 'select' }), [{ field: 'options', message: 'must list at least one option for a select field' }]);
    t.same(await problems({ key: 'size', label: 'Size', kind: 'text', options: ['a'] }), [{ field: 'options', message: 'are only for select fields, not text' }]);
    t.same(await problems({ key: 'size', label: 'Size', kind: 'select', options: ['a', 'a'] }), [{ field: 'options.1', message: 'repeats an earlier option' }]);
    t.same(await problems({ key: 'subject', label: 'Subject', kind: 'text' }), [{ field: 'key', message: 'names a ticket field and is reserved' }]);
    t.same((await problems({ key: 'Bad Key', label: 'x', kind: 'color' })).map((d: { field: string }) => d.field).sort(), ['key', 'kind']);
    const dup = await call(env, 'POST', '/custom-fields', { token: admin, body: { key: 'plan', label: 'Again', kind: 'text' } });
    t.equal(dup.statusCode, 409);

    const id = select.json().id;
    const kindChange = await call(env, 'PATCH', `/custom-fields/${id}`, { token: admin, body: { kind: 'text' } });
    t.equal(kindChange.statusCode, 422, 'kind is fixed');
    const updated = await call(env, 'PATCH', `/custom-fields/${id}`, { token: admin, body: { options: ['free', 'pro', 'enterprise'], required: true } });
    t.match(updated.json(), { options: ['free', 'pro', 'enterprise'], required: true });
    t.equal((await call(env, 'PATCH', `/custom-fields/${id}`, { token: other.admin.token, body: { label: 'x' } })).statusCode, 404);

    const ticket = await call(env, 'POST', '/tickets', { token: admin, body: { subject: 's', body: 'b', requester_id: customer.id, plan: 'pro' } });
    t.equal(ticket.statusCode, 201, ticket.body);
    const refused = await call(env, 'DELETE', `/custom-fields/${id}`, { token: admin });
    t.equal(refused.statusCode, 409);
    t.match(refused.json().details, { reason: 'in_use' });

    const spare = (await call(env, 'POST', '/custom-fields', { token: admin, body: { key: 'spare', label: 'Spare', kind: 'bool' } })).json();
    t.equal((await call(env, 'DELETE', `/custom-fields/${spare.id}`, { token: admin })).statusCode, 204);
    t.same((await call(env, 'GET', '/custom-fields', { token: agent.token })).json().data.map((f: { key: string }) => f.key), ['plan']);
    t.equal((await call(env, 'GET', '/custom-fields', { token: customer.token })).statusCode, 403, 'customers do not hold custom_fields:read');
  });

  t.same(env.guard.violations, [], 'every query carried tenant_id');
});
