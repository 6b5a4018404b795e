import t from 'tap';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';

const eventsOf = (env: TestEnv, tenantId: string, type: string) =>
  env.deps.db('events').where({ tenant_id: tenantId, type }).orderBy('created_at').orderBy('id');
const count = async (env: TestEnv, table: string, tenantId: string) =>
  Number((await env.deps.db(table).where({ tenant_id: tenantId }).count({ n: '*' }))[0]!.n);

t.test('organizations', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const admin = tenant.admin.token;
  const otherOrg = (await call(env, 'POST', '/organizations', { token: other.admin.token, body: { name: 'Elsewhere', domains: ['acme.example'] } })).json();

  let acme: { id: string };

  await t.test('POST creates with normalised domains and records organization.created', async (t) => {
    const res = await call(env, 'POST', '/organizations', {
      token: admin,
      body: { name: ' Acme Corp ', domains: ['ACME.example', 'acme.example', 'acme-corp.example'], website: 'https://acme.example', custom_fields: { tier: 'gold', seats: 40 }, shares_tickets: true },
    });
    t.equal(res.statusCode, 201, res.body);
    acme = res.json();
    t.match(acme, { name: 'Acme Corp', domains: ['acme.example', 'acme-corp.example'], website: 'https://acme.example', notes: null, custom_fields: { tier: 'gold', seats: 40 }, shares_tickets: true });
    t.same(Object.keys(acme).sort(), ['created_at', 'custom_fields', 'domains', 'id', 'name', 'notes', 'shares_tickets', 'updated_at', 'website']);
    const [event] = await eventsOf(env, tenant.id, 'organization.created');
    t.match(event, { subject_type: 'organization', subject_id: acme.id, actor_id: tenant.admin.id });
    t.same(event.data, {
      id: acme.id, name: 'Acme Corp', primary_domain: 'acme.example', domains: ['acme.example', 'acme-corp.example'], website: 'https://acme.example',
      notes: null, custom_fields: { tier: 'gold', seats: 40 }, shares_tickets: true,
    });
    const [audit] = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'organization.created' });
    t.equal(audit.resource_id, acme.id);
    // The same domain in another tenant is no conflict (created above, before this one).
    t.ok(otherOrg.id);
  });

  await t.test('duplicate names and domains are refused, naming the field; nothing written', async (t) => {
    const before = await count(env, 'organizations', tenant.id);
    const name = await call(env, 'POST', '/organizations', { token: admin, body: { name: 'ACME corp' } });
    t.equal(name.statusCode, 409);
    t.equal(name.json().code, 'already_exists');
    const domain = await call(env, 'POST', '/organizations', { token: admin, body: { name: 'Other', domains: ['fresh.example', 'Acme-Corp.example'] } });
    t.equal(domain.statusCode, 422);
    t.same(domain.json().details, [{ field: 'domains.1', message: 'is already a domain of the organization Acme Corp' }]);
    t.equal(await count(env, 'organizations', tenant.id), before);
    t.equal(await count(env, 'organization_domains', tenant.id), 2, 'the domain index holds only Acme');
    t.equal((await eventsOf(env, tenant.id, 'organization.created')).length, 1, 'no event for refused writes');
  });

  await t.test('bad input: one problem per field', async (t) => {
    const res = await call(env, 'POST', '/organizations', {
      token: admin,
      body: { name: ' ', domains: ['not a domain', 'x'.repeat(300)], website: 'ftp://x.example', custom_fields: { 'Bad Key': 1, ok: { nested: true } }, shares_tickets: 'yes', extra: 1 },
    });
    t.equal(res.statusCode, 422);
    const fields = new Set((res.json().details as Array<{ field: string }>).map((d) => d.field));
    for (const f of ['name', 'domains.0', 'domains.1', 'website', 'shares_tickets', 'extra']) t.ok(fields.has(f), `names ${f}`);
    t.ok([...fields].some((f) => f.startsWith('custom_fields')), 'names custom_fields');
  });

  await t.test('a new customer at an organization domain is linked automatically', async (t) => {
    const res = await call(env, 'POST', '/users', { token: admin, body: { email: 'Wile.E@ACME-corp.example', name: 'Wile E.' } });
    t.equal(res.statusCode, 201);
    t.equal(res.json().organization_id, acme.id);
    const [event] = await eventsOf(env, tenant.id, 'customer.created');
    t.match(event.data, { email: 'wile.e@acme-corp.example', organization_id: acme.id, is_vip: false });
    // Staff are not linked; a named organization wins; an unknown domain stays unlinked.
    const staff = await call(env, 'POST', '/users', { token: admin, body: { email: 'helper@acme.example', name: 'Helper', role: 'agent' } });
    t.equal(staff.json().organization_id, null);
    const elsewhere = await call(env, 'POST', '/users', { token: admin, body: { email: 'someone@unknown.example', name: 'Someone' } });
    t.equal(elsewhere.json().organization_id, null);
    // Self-registration takes the same path.
    const { csrfToken } = await import('../../helpers/app.js');
    const reg = await call(env, 'POST', '/auth/register', {
      tenant: tenant.slug, csrf: await csrfToken(env, tenant.slug),
      body: { email: 'roadrunner@acme.example', name: 'Road Runner', password: 'a long enough passphrase' },
    });
    t.equal(reg.statusCode, 201, reg.body);
    const row = await env.deps.db('users').where({ tenant_id: tenant.id, email: 'roadrunner@acme.example' }).first();
    t.equal(row.organization_id, acme.id);
    t.equal((await eventsOf(env, tenant.id, 'customer.created')).length, 3, 'intake, intake, registration');
  });

  await t.test('GET list, search by name or domain, filter values, members', async (t) => {
    await call(env, 'POST', '/organizations', { token: admin, body: { name: 'Beta Industries', domains: ['beta.example'] } });
    const list = await call(env, 'GET', '/organizations', { token: agent.token });
    t.equal(list.statusCode, 200);
    t.same(list.json().data.map((o: { name: string }) => o.name), ['Acme Corp', 'Beta Industries']);
    t.same(list.json().meta, { page: 1, page_size: 20, total: 2 });
    const byDomain = await call(env, 'GET', '/organizations', { token: agent.token, query: { q: 'beta.example' } });
    t.same(byDomain.json().data.map((o: { name: string }) => o.name), ['Beta Industries']);
    const values = await call(env, 'GET', '/organizations/filter-values', { token: agent.token, query: { q: 'ind' } });
    t.same(values.json(), { data: [{ id: byDomain.json().data[0].id, name: 'Beta Industries' }] });
    const all = await call(env, 'GET', '/organizations/filter-values', { token: agent.token, query: { limit: '1' } });
    t.equal(all.json().data.length, 1);
    const members = await call(env, 'GET', `/organizations/${acme.id}/members`, { token: agent.token });
    t.same(members.json().data.map((u: { email: string }) => u.email).sort(), ['roadrunner@acme.example', 'wile.e@acme-corp.example']);
    const got = await call(env, 'GET', `/organizations/${acme.id}`, { token: agent.token });
    t.equal(got.json().name, 'Acme Corp');
  });

  await t.test('PATCH records organization.updated with the full snapshot; no change, no event', async (t) => {
    const res = await call(env, 'PATCH', `/organizations/${acme.id}`, { token: admin, body: { domains: ['acme.example'], notes: 'Key account' } });
    t.equal(res.statusCode, 200);
    t.match(res.json(), { domains: ['acme.example'], notes: 'Key account' });
    t.same((await env.deps.db('organization_domains').where({ tenant_id: tenant.id, organization_id: acme.id })).map((r) => r.domain), ['acme.example']);
    const events = await eventsOf(env, tenant.id, 'organization.updated');
    t.equal(events.length, 1);
    t.match(events[0].data, { id: acme.id, name: 'Acme Corp', primary_domain: 'acme.example', notes: 'Key account' });
    await call(env, 'PATCH', `/organizations/${acme.id}`, { token: admin, body: { notes: 'Key account' } });
    t.equal((await eventsOf(env, tenant.id, 'organization.updated')).length, 1);
    // The freed domain can go to another organization now.
    const freed = await call(env, 'POST', '/organizations', { token: admin, body: { name: 'Corp Two', domains: ['acme-corp.example'] } });
    t.equal(freed.statusCode, 201);
  });

  await t.test('agents read but may not write; other tenants see 404', async (t) => {
    const write = await call(env, 'POST', '/organizations', { token: agent.token, body: { name: 'Nope' } });
    t.equal(write.statusCode, 403);
    t.equal(write.json().code, 'insufficient_scope');
    for (const [method, path] of [['GET', `/organizations/${otherOrg.id}`], ['PATCH', `/organizations/${otherOrg.id}`], ['DELETE', `/organizations/${otherOrg.id}`], ['GET', `/organizations/${otherOrg.id}/members`]] as const) {
      const res = await call(env, method, path, { token: admin, body: method === 'PATCH' ? { notes: 'x' } : undefined });
      t.equal(res.statusCode, 404, `${method} ${path}`);
      t.equal(res.json().code, 'resource_not_found');
    }
    const unknown = await call(env, 'GET', '/organizations/0190a1b2-0000-7000-8000-00000000abcd', { token: admin });
    t.equal(unknown.statusCode, 404);
  });

  await t.test('PATCH /users/{id}/organization links and unlinks, with customer.updated', async (t) => {
    const customer = await userFixture(env, tenant.id, 'customer');
    const link = await call(env, 'PATCH', `/users/${customer.id}/organization`, { token: admin, body: { organization_id: acme.id } });
    t.equal(link.statusCode, 200);
    t.equal(link.json().organization_id, acme.id);
    const updated = (await eventsOf(env, tenant.id, 'customer.updated')).filter((e) => e.subject_id === customer.id);
    t.equal(updated.length, 1);
    t.match(updated[0].data, { id: customer.id, organization_id: acme.id });
    const foreign = await call(env, 'PATCH', `/users/${customer.id}/organization`, { token: admin, body: { organization_id: otherOrg.id } });
    t.equal(foreign.statusCode, 422);
    t.same(foreign.json().details, [{ field: 'organization_id', message: 'is not an organization of this tenant' }]);
    const unlink = await call(env, 'PATCH', `/users/${customer.id}/organization`, { token: admin, body: { organization_id: null } });
    t.equal(unlink.json().organization_id, null);
    const otherUser = await userFixture(env, other.id, 'customer');
    const cross = await call(env, 'PATCH', `/users/${otherUser.id}/organization`, { token: admin, body: { organization_id: acme.id } });
    t.equal(cross.statusCode, 404);
  });

  await t.test('DELETE unlinks members (customer.updated each) and frees the domains', async (t) => {
    const res = await call(env, 'DELETE', `/organizations/${acme.id}`, { token: admin });
    t.equal(res.statusCode, 204);
    const rows = await env.deps.db('users').where({ tenant_id: tenant.id }).whereIn('email', ['roadrunner@acme.example', 'wile.e@acme-corp.example']);
    t.same(rows.map((r) => r.organization_id), [null, null]);
    const unlinked = (await eventsOf(env, tenant.id, 'customer.updated')).filter((e) => e.data.organization_id === null && rows.some((r) => r.id === e.subject_id));
    t.equal(unlinked.length, 2);
    t.equal(await env.deps.db('organization_domains').where({ tenant_id: tenant.id, domain: 'acme.example' }).first(), undefined);
    t.equal((await call(env, 'GET', `/organizations/${acme.id}`, { token: admin })).statusCode, 404);
  });

  t.same(env.guard.violations, [], 'every query was tenant-scoped');
});
