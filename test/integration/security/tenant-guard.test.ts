import t from 'tap';
import { testApp, tenantFixture } from '../../helpers/app.js';
import { scoped } from '../../../src/db/tenant-scope.js';

t.test('the tenant guard reports queries on tenant-owned tables without tenant_id', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  env.guard.violations.length = 0;
  await scoped({ trx: env.deps.db, tenantId: tenant.id }, 'users').select('id');
  t.same(env.guard.violations, [], 'a scoped query passes');
  await env.deps.db('tenants').select('id');
  t.same(env.guard.violations, [], 'tenants itself is not tenant-owned');
  await env.deps.db('users').select('id');
  t.equal(env.guard.violations.length, 1, 'an unscoped query on users is caught');
  t.match(env.guard.violations[0], /from "users"/);
  await env.deps.db('sessions').comment('cross-tenant: explained').select('id');
  t.equal(env.guard.violations.length, 1, 'a declared cross-tenant read is allowed');
  env.guard.violations.length = 0;
});
