import t from 'tap';
import { apiKeyFixture, call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';

/**
 * Custom roles (CONTRACT §19): system roles listed and unchangeable, the RBAC module gate, unique
 * names, the matrix validated and mapped onto scopes, assignment through the role change route,
 * enforcement by the ordinary scope checks, deletion refused while in use, an audit row per change.
 */
t.test('roles: system roles, licence gate, matrix, assignment, enforcement, deletion, audit', async (t) => {
  const keys = licenseKeys();
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem });
  const tenant = await tenantFixture(env);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent');

  // System roles are there in every edition, and cannot change.
  let res = await call(env, 'GET', '/roles', { token: admin });
  t.equal(res.statusCode, 200);
  t.same(res.json().data.map((r: { name: string; system: boolean }) => [r.name, r.system]), [['admin', true], ['agent', true], ['customer', true]]);
  t.same(res.json().meta, { page: 1, page_size: 20, total: 3 });
  t.same(res.json().data[2].permissions, { tickets: ['list', 'view', 'edit'] });
  t.equal(res.json().data[1].users, 1, 'one agent');
  res = await call(env, 'GET', '/roles', { token: agent.token });
  t.equal(res.statusCode, 403, 'roles are for admins');
  t.equal(res.json().code, 'forbidden');

  // Community: custom roles are refused, and assigning one by name too.
  res = await call(env, 'POST', '/roles', { token: admin, body: { name: 'Billing agent' } });
  t.equal(res.statusCode, 403);
  t.same(res.json().details, { feature: 'rbac' });
  res = await call(env, 'PATCH', `/users/${agent.id}/role`, { token: admin, body: { role: 'Billing agent' } });
  t.equal(res.statusCode, 422, 'Community knows the system roles only');
  t.same(res.json().details, [{ field: 'role', message: 'must be one of admin, agent, customer' }]);

  await grantLicense(env, tenant.id, keys);
  for (const id of ['admin', 'agent', 'customer']) {
    res = await call(env, 'PUT', `/roles/${id}/permissions`, { token: admin, body: { tickets: ['list'] } });
    t.equal(res.statusCode, 409, `${id}: permissions cannot change`);
    t.equal(res.json().code, 'conflict');
    res = await call(env, 'DELETE', `/roles/${id}`, { token: admin });
    t.equal(res.statusCode, 409, `${id}: cannot be deleted`);
    res = await call(env, 'PATCH', `/roles/${id}`, { token: admin, body: { name: 'x' } });
    t.equal(res.statusCode, 409, `${id}: cannot be renamed`);
  }

  res = await call(env, 'POST', '/roles', { token: admin, body: { name: 'Billing agent', description: 'Billing tickets' } });
  t.equal(res.statusCode, 201);
  const role = res.json();
  t.match(role, { name: 'Billing agent', description: 'Billing tickets', system: false, permissions: {}, scopes: [], users: 0 });
  for (const name of ['billing AGENT', 'Admin', 'customer']) {
    res = await call(env, 'POST', '/roles', { token: admin, body: { name } });
    t.equal(res.statusCode, 409, `${name}: taken`);
    t.equal(res.json().code, 'already_exists');
  }
  res = await call(env, 'POST', '/roles', { token: admin, body: { name: '   ' } });
  t.equal(res.statusCode, 422);

  // The matrix: known resources and actions only; mapped onto scopes.
  res = await call(env, 'PUT', `/roles/${role.id}/permissions`, { token: admin, body: { invoices: ['list'] } });
  t.equal(res.statusCode, 422, 'unknown resource');
  res = await call(env, 'PUT', `/roles/${role.id}/permissions`, { token: admin, body: { tickets: ['fly'] } });
  t.equal(res.statusCode, 422, 'unknown action');
  res = await call(env, 'PUT', `/roles/${role.id}/permissions`, { token: admin, body: { tickets: ['view', 'list', 'edit', 'list'], organizations: ['view'], tags: [] } });
  t.equal(res.statusCode, 200);
  t.same(res.json().permissions, { tickets: ['list', 'view', 'edit'], organizations: ['view'] });
  t.same(res.json().scopes, ['organizations:read', 'tickets:read', 'tickets:write']);

  // Assignment by name through the role change route; the holder is staff with exactly these scopes.
  res = await call(env, 'PATCH', `/users/${agent.id}/role`, { token: admin, body: { role: 'Nobody' } });
  t.equal(res.statusCode, 422, 'no such role');
  res = await call(env, 'PATCH', `/users/${agent.id}/role`, { token: admin, body: { role: 'billing agent' } });
  t.equal(res.statusCode, 200);
  t.match(res.json(), { role: 'agent', custom_role_id: role.id });
  t.equal((await call(env, 'GET', '/tickets', { token: agent.token })).statusCode, 200, 'tickets:read');
  t.equal((await call(env, 'GET', '/organizations', { token: agent.token })).statusCode, 200, 'organizations:read');
  res = await call(env, 'GET', '/tags', { token: agent.token });
  t.equal(res.statusCode, 403, 'an agent could list tags; this role cannot');
  t.same(res.json().details, { required_scope: 'tags:read' });
  res = await call(env, 'POST', '/organizations', { token: agent.token, body: { name: 'Acme' } });
  t.equal(res.statusCode, 403, 'view only');
  t.same(res.json().details, { required_scope: 'organizations:write' });
  res = await call(env, 'GET', '/users', { token: agent.token });
  t.equal(res.statusCode, 403, 'users:read is not granted');

  // A key of the holder never reaches beyond the role.
  const key = await apiKeyFixture(env, tenant.id, agent.id, ['tickets:read', 'tags:read']);
  t.equal((await call(env, 'GET', '/tickets', { token: key.key })).statusCode, 200);
  t.equal((await call(env, 'GET', '/tags', { token: key.key })).statusCode, 403);

  // A change of the matrix holds from the next request on.
  await call(env, 'PUT', `/roles/${role.id}/permissions`, { token: admin, body: { tags: ['list'] } });
  t.equal((await call(env, 'GET', '/tags', { token: agent.token })).statusCode, 200);
  t.equal((await call(env, 'GET', '/tickets', { token: agent.token })).statusCode, 403);

  // users:write alone may not hand out a role with more than its holder has.
  const power = (await call(env, 'POST', '/roles', { token: admin, body: { name: 'Directory clerk' } })).json();
  await call(env, 'PUT', `/roles/${power.id}/permissions`, { token: admin, body: { users: ['list', 'view', 'edit'] } });
  const clerk = await userFixture(env, tenant.id, 'agent');
  t.equal((await call(env, 'PATCH', `/users/${clerk.id}/role`, { token: admin, body: { role: 'Directory clerk' } })).statusCode, 200);
  const big = (await call(env, 'POST', '/roles', { token: admin, body: { name: 'Everything' } })).json();
  await call(env, 'PUT', `/roles/${big.id}/permissions`, { token: admin, body: { users: ['edit'], api_keys: ['edit'] } });
  res = await call(env, 'PATCH', `/users/${clerk.id}/role`, { token: clerk.token, body: { role: 'Everything' } });
  t.equal(res.statusCode, 403, 'no escalation through users:write');
  t.equal(res.json().code, 'forbidden');
  res = await call(env, 'PATCH', `/users/${clerk.id}/role`, { token: clerk.token, body: { role: 'admin' } });
  t.equal(res.statusCode, 403, 'nor to admin');

  // In use: 409; free again: 204.
  res = await call(env, 'DELETE', `/roles/${role.id}`, { token: admin });
  t.equal(res.statusCode, 409, 'a role in use cannot be deleted');
  t.equal(res.json().code, 'conflict');
  t.same(res.json().details, { users: 1 });
  t.equal((await call(env, 'GET', `/roles/${role.id}`, { token: admin })).json().users, 1);
  res = await call(env, 'PATCH', `/users/${agent.id}/role`, { token: admin, body: { role: 'agent' } });
  t.match(res.json(), { role: 'agent', custom_role_id: null });
  t.equal((await call(env, 'GET', '/tickets', { token: agent.token })).statusCode, 200, 'back to the agent scopes');
  res = await call(env, 'PATCH', `/roles/${role.id}`, { token: admin, body: { name: 'Billing' } });
  t.equal(res.statusCode, 200);
  t.equal(res.json().name, 'Billing');
  res = await call(env, 'PATCH', `/roles/${role.id}`, { token: admin, body: { name: 'directory CLERK' } });
  t.equal(res.statusCode, 409);
  t.equal((await call(env, 'DELETE', `/roles/${role.id}`, { token: admin })).statusCode, 204);
  t.equal((await call(env, 'GET', `/roles/${role.id}`, { token: admin })).statusCode, 404);
  t.equal((await call(env, 'GET', '/roles/not-a-role', { token: admin })).statusCode, 404);

  // Every change is audited.
  const audit = await env.deps.db('audit_log').where({ tenant_id: tenant.id }).whereIn('action', ['role.created', 'role.updated', 'role.permissions_changed', 'role.deleted', 'user.role_changed']).orderBy('created_at').orderBy('id');
  const of = (action: string) => audit.filter((a) => a.action === action);
  t.equal(of('role.created').length, 3);
  t.equal(of('role.permissions_changed').length, 4);
  t.same(of('role.permissions_changed')[0].changes.scopes, { from: [], to: ['organizations:read', 'tickets:read', 'tickets:write'] });
  t.equal(of('role.updated').length, 1);
  t.same(of('role.deleted').map((a) => a.resource_id), [role.id]);
  t.same(of('user.role_changed').filter((a) => a.resource_id === agent.id).map((a) => [a.changes.from, a.changes.to]), [['agent', 'Billing agent'], ['Billing agent', 'agent']]);

  // Without the RBAC module (a licence without it), a custom role can no longer be handed out.
  await grantLicense(env, tenant.id, keys, { modules: ['meetings'] });
  res = await call(env, 'PATCH', `/users/${agent.id}/role`, { token: admin, body: { role: 'Directory clerk' } });
  t.equal(res.statusCode, 403);
  t.same(res.json().details, { feature: 'rbac' });
  await grantLicense(env, tenant.id, keys);

  // Another tenant never sees this tenant's roles.
  const other = await tenantFixture(env);
  await grantLicense(env, other.id, keys);
  t.equal((await call(env, 'GET', `/roles/${power.id}`, { token: other.admin.token })).statusCode, 404);
  t.equal((await call(env, 'PUT', `/roles/${power.id}/permissions`, { token: other.admin.token, body: {} })).statusCode, 404);
  t.equal((await call(env, 'DELETE', `/roles/${power.id}`, { token: other.admin.token })).statusCode, 404);
  t.equal((await call(env, 'GET', '/roles', { token: other.admin.token })).json().meta.total, 3);
  res = await call(env, 'PATCH', `/users/${(await userFixture(env, other.id, 'agent')).id}/role`, { token: other.admin.token, body: { role: 'Directory clerk' } });
  t.equal(res.statusCode, 422, "another tenant's role name is unknown here");
  t.same(env.guard.violations, [], 'every query was tenant-scoped');
});
