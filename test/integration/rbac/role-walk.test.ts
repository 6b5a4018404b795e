import t from 'tap';
import { exampleBody } from '../../helpers/routes.js';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import type { RouteDef } from '../../../daemon/route.js';

/**
 * A custom role is enforced by the ordinary pipeline: walks EVERY route (the list the access-rules
 * test walks) as a user whose custom role grants a single resource, and checks that exactly that
 * resource's routes open. Routes without a scope follow their role rule as for any agent (the
 * holder is staff): staff and signed-in routes open, admin routes answer `forbidden`.
 */
const pathOf = (def: RouteDef) => def.url.replace(/:(\w+)/g, '0190a1b2-0000-7000-8000-000000000000');

t.test('a role granted one resource opens exactly that resource\'s routes', async (t) => {
  const keys = licenseKeys();
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem });
  const tenant = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  const tokenRoutes = env.app.routeDefs.filter((d) => d.access.kind === 'token');

  for (const resource of ['organizations', 'tags', 'users']) {
    const role = (await call(env, 'POST', '/roles', { token: tenant.admin.token, body: { name: `Only ${resource}` } })).json();
    const res = await call(env, 'PUT', `/roles/${role.id}/permissions`, { token: tenant.admin.token, body: { [resource]: ['list', 'view', 'edit', 'delete'] } });
    t.same(res.json().scopes, [`${resource}:delete`, `${resource}:read`, `${resource}:write`]);
    const user = await userFixture(env, tenant.id, 'agent');
    t.equal((await call(env, 'PATCH', `/users/${user.id}/role`, { token: tenant.admin.token, body: { role: role.name } })).statusCode, 200);

    let opened = 0;
    for (const def of tokenRoutes) {
      const access = def.access as { kind: 'token'; scope?: string; roles?: readonly string[] };
      const label = `${resource}: ${def.method} ${def.url}`;
      const answer = await call(env, def.method, pathOf(def), { token: user.token, body: exampleBody(def), query: def.example?.query });
      const code = answer.headers['content-type']?.toString().includes('json') ? answer.json()?.code : undefined;
      const refused = (answer.statusCode === 401 && code === 'unauthenticated') || (answer.statusCode === 403 && (code === 'insufficient_scope' || code === 'forbidden'));
      const roleOk = !access.roles || access.roles.includes('agent');
      const scopeOk = !access.scope || access.scope.split(':')[0] === resource;
      if (roleOk && scopeOk) {
        t.notOk(refused, `${label} opens (${answer.statusCode} ${code ?? ''})`);
        if (access.scope) opened++;
      } else {
        t.equal(answer.statusCode, 403, `${label} stays shut`);
        t.equal(code, roleOk ? 'insufficient_scope' : 'forbidden', label);
        if (roleOk) t.same(answer.json().details, { required_scope: access.scope }, label);
      }
    }
    t.ok(opened > 0, `${resource}: some routes opened (${opened})`);
  }
});
