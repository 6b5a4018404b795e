import t from 'tap';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';

const eventsOf = (env: TestEnv, tenantId: string, type: string, subjectId: string) =>
  env.deps.db('events').where({ tenant_id: tenantId, type, subject_id: subjectId }).orderBy('created_at').orderBy('id');

t.test('customer directory: search, VIP, custom fields, alternate emails, events', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent');
  const org = (await call(env, 'POST', '/organizations', { token: admin, body: { name: 'Globex' } })).json();

  const create = async (body: Record<string, unknown>) => {
    const res = await call(env, 'POST', '/users', { token: admin, body });
    t.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const homer = await create({ email: 'homer@globex.example', name: 'Homer Simpson', alternate_emails: ['chunkylover53@aol.example'], is_vip: true, organization_id: org.id });
  const marge = await create({ email: 'marge@springfield.example', name: 'Marge Simpson', custom_fields: { plan: 'family', seats: 2, newsletter: true, note: null } });
  await create({ email: 'ned@springfield.example', name: 'Ned Flanders' });

  await t.test('customer.created carries the snapshot of the spec', async (t) => {
    const [event] = await eventsOf(env, tenant.id, 'customer.created', homer.id);
    t.same(event.data, { id: homer.id, email: 'homer@globex.example', name: 'Homer Simpson', phone: null, organization_id: org.id, is_vip: true, custom_fields: {} });
    t.equal(event.subject_type, 'customer');
    t.equal(event.actor_id, tenant.admin.id);
    t.same(marge.custom_fields, { plan: 'family', seats: 2, newsletter: true, note: null });
  });

  await t.test('GET /users searches name, email and alternate emails; filters VIP and organization', async (t) => {
    const emails = async (query: Record<string, string>) =>
      (await call(env, 'GET', '/users', { token: agent.token, query: { role: 'customer', sort_by: 'email', ...query } })).json().data.map((u: { email: string }) => u.email);
    t.same(await emails({ q: 'simpson' }), ['homer@globex.example', 'marge@springfield.example']);
    t.same(await emails({ q: 'CHUNKYLOVER' }), ['homer@globex.example'], 'alternate emails are searched');
    t.same(await emails({ q: 'springfield' }), ['marge@springfield.example', 'ned@springfield.example']);
    t.same(await emails({ q: '%' }), [], 'wildcards are literal');
    t.same(await emails({ is_vip: 'true' }), ['homer@globex.example']);
    t.same(await emails({ is_vip: 'false' }), ['marge@springfield.example', 'ned@springfield.example']);
    t.same(await emails({ organization_id: org.id }), ['homer@globex.example']);
    const bad = await call(env, 'GET', '/users', { token: agent.token, query: { organization_id: 'nope', is_vip: 'perhaps' } });
    t.equal(bad.statusCode, 422);
  });

  await t.test('emails are unique across primary and alternate addresses within a tenant', async (t) => {
    const before = Number((await env.deps.db('users').where({ tenant_id: tenant.id }).count({ n: '*' }))[0]!.n);
    const asPrimary = await call(env, 'POST', '/users', { token: admin, body: { email: 'ChunkyLover53@aol.example', name: 'Impostor' } });
    t.equal(asPrimary.statusCode, 409);
    t.same(asPrimary.json().details, [{ field: 'email', message: 'is already taken' }]);
    const asAlternate = await call(env, 'POST', '/users', { token: admin, body: { email: 'new@example.com', name: 'New', alternate_emails: ['x@example.com', 'MARGE@springfield.example'] } });
    t.equal(asAlternate.statusCode, 409);
    t.same(asAlternate.json().details, [{ field: 'alternate_emails.1', message: 'is already taken' }]);
    const patch = await call(env, 'PATCH', `/users/${marge.id}`, { token: admin, body: { alternate_emails: ['homer@globex.example'] } });
    t.equal(patch.statusCode, 409);
    t.same(patch.json().details, [{ field: 'alternate_emails.0', message: 'is already taken' }]);
    const primary = await call(env, 'PATCH', `/users/${marge.id}`, { token: admin, body: { email: 'chunkylover53@aol.example' } });
    t.equal(primary.statusCode, 409);
    t.equal(Number((await env.deps.db('users').where({ tenant_id: tenant.id }).count({ n: '*' }))[0]!.n), before, 'nothing written');
    // The same addresses are free in another tenant; the own primary listed as alternate is dropped.
    const elsewhere = await call(env, 'POST', '/users', { token: other.admin.token, body: { email: 'chunkylover53@aol.example', name: 'Other Homer', alternate_emails: ['homer@globex.example'] } });
    t.equal(elsewhere.statusCode, 201);
    const self = await call(env, 'PATCH', `/users/${homer.id}`, { token: admin, body: { alternate_emails: ['Homer@Globex.example', 'mr.plow@example.com', 'mr.plow@example.com'] } });
    t.equal(self.statusCode, 200);
    t.same(self.json().alternate_emails, ['mr.plow@example.com']);
    // The released address is free again.
    const reuse = await call(env, 'PATCH', `/users/${marge.id}`, { token: admin, body: { alternate_emails: ['chunkylover53@aol.example'] } });
    t.equal(reuse.statusCode, 200);
  });

  await t.test('customer.updated for contact, VIP, custom fields and alternate emails; none without a change or for staff', async (t) => {
    const count = async () => (await eventsOf(env, tenant.id, 'customer.updated', marge.id)).length;
    const start = await count();
    await call(env, 'PATCH', `/users/${marge.id}`, { token: admin, body: { is_vip: true } });
    await call(env, 'PATCH', `/users/${marge.id}`, { token: admin, body: { custom_fields: { plan: 'gold' } } });
    await call(env, 'PATCH', `/users/${marge.id}`, { token: admin, body: { phone: '+1 555 0100' } });
    await call(env, 'PATCH', `/users/${marge.id}`, { token: admin, body: { phone: '+1 555 0100' } });
    t.equal(await count(), start + 3, 'three changes, three events');
    const events = await eventsOf(env, tenant.id, 'customer.updated', marge.id);
    t.same(events.at(-1).data, {
      id: marge.id, email: 'marge@springfield.example', name: 'Marge Simpson', phone: '+1 555 0100', organization_id: null, is_vip: true, custom_fields: { plan: 'gold' },
    });
    await call(env, 'PATCH', `/users/${agent.id}`, { token: admin, body: { phone: '+1 555 0199' } });
    t.equal((await eventsOf(env, tenant.id, 'customer.updated', agent.id)).length, 0, 'staff are not customers');
    // A refused change records nothing.
    const refused = await call(env, 'PATCH', `/users/${marge.id}`, { token: admin, body: { is_vip: false, organization_id: '0190a1b2-0000-7000-8000-00000000abcd' } });
    t.equal(refused.statusCode, 422);
    t.same(refused.json().details, [{ field: 'organization_id', message: 'is not an organization of this tenant' }]);
    t.equal(await count(), start + 3);
  });

  await t.test('custom field values are bounded: snake_case keys, scalar values', async (t) => {
    const res = await call(env, 'PATCH', `/users/${marge.id}`, { token: admin, body: { custom_fields: { 'Not Snake': 1, nested: { a: 1 }, long: 'x'.repeat(2001) } } });
    t.equal(res.statusCode, 422);
    const fields = (res.json().details as Array<{ field: string }>).map((d) => d.field);
    t.ok(fields.every((f) => f.startsWith('custom_fields')), fields.join(', '));
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
    t.equal((await call(env, 'PATCH', `/users/${marge.id}`, { token: admin, body: { custom_fields: many } })).statusCode, 422);
  });
  t.same(env.guard.violations, []);
});
