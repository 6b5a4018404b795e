import t from 'tap';
import { exampleBody } from '../../helpers/routes.js';
import { apiKeyFixture, call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import type { RouteDef } from '../../../daemon/route.js';
import { grants, ROLE_SCOPES } from '../../../src/auth/scopes.js';

/**
 * Every route's declared access is enforced: walks all registered routes and checks that an API
 * key without the route's scope gets 403 insufficient_scope naming it, that a customer gets 403 on
 * staff/admin routes, and that a Community tenant gets 403 feature_not_licensed on gated routes.
 */
/** Any syntactically valid id: access checks run before the resource is looked up. */
const pathOf = (def: RouteDef) => def.url.replace(/:(\w+)/g, '0190a1b2-0000-7000-8000-000000000000');

t.test('scopes, roles and licence features are enforced on every route', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const customer = await userFixture(env, tenant.id, 'customer');
  const tokenRoutes = env.app.routeDefs.filter((d) => d.access.kind === 'token');
  t.ok(tokenRoutes.length > 0);

  for (const def of tokenRoutes) {
    const access = def.access as { kind: 'token'; scope?: string; roles?: readonly string[] };
    const label = `${def.method} ${def.url}`;
    const body = exampleBody(def);

    if (access.scope && access.scope !== 'admin') {
      // The admin's own key, limited to a scope unrelated to this route.
      const unrelated = access.scope.startsWith('license:') ? 'teams:read' : 'license:read';
      const { key } = await apiKeyFixture(env, tenant.id, tenant.admin.id, [unrelated]);
      const res = await call(env, def.method, pathOf(def), { token: key, body });
      t.equal(res.statusCode, 403, `${label}: a key without ${access.scope} is refused`);
      t.equal(res.json().code, 'insufficient_scope', label);
      t.same(res.json().details, { required_scope: access.scope }, label);
    }

    const customerRefused = access.roles
      ? !access.roles.includes('customer')
      : Boolean(access.scope && !grants(ROLE_SCOPES.customer, access.scope));
    if (customerRefused) {
      const res = await call(env, def.method, pathOf(def), { token: customer.token, body });
      t.equal(res.statusCode, 403, `${label}: a customer is refused`);
      t.match(res.json().code, /^(forbidden|insufficient_scope)$/, label);
      if (access.roles) t.equal(res.json().code, 'forbidden', `${label}: role rule answers forbidden`);
    }
  }

  // The tenant has no licence: Community. Gated routes answer feature_not_licensed to its admin.
  for (const def of env.app.routeDefs.filter((d) => d.feature)) {
    const res = await call(env, def.method, pathOf(def), { token: tenant.admin.token, body: exampleBody(def) });
    t.equal(res.statusCode, 403, `${def.method} ${def.url}: Community is refused`);
    t.same({ code: res.json().code, details: res.json().details }, { code: 'feature_not_licensed', details: { feature: def.feature } });
  }
});

t.test('a route without an access rule cannot be registered', async (t) => {
  const { registerRoute } = await import('../../../daemon/route.js');
  const fake = { routeDefs: [], deps: {}, route: () => undefined } as never;
  t.throws(() => registerRoute(fake, { method: 'GET', url: '/x', summary: 'x', tags: ['x'], schema: {}, handler: async () => ({}) } as never), /declares no access rule/);
  t.throws(
    () => registerRoute(fake, { method: 'GET', url: '/x', access: { kind: 'token' }, summary: 'x', tags: ['x'], schema: {}, handler: async () => ({}) }),
    /needs a scope, roles, or authenticatedOnly/,
  );
});
