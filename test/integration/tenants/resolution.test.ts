import t from 'tap';
import { call, testApp, tenantFixture } from '../../helpers/app.js';
import { verifyCsrfToken } from '../../../src/auth/csrf.js';

// CONTRACT §3: without a token, the tenant comes from X-Helpdesk-Tenant, else from Host (a custom
// domain or <slug>.<HELPDESK_BASE_DOMAIN>); the opt-in default tenant comes last.
t.test('tenant resolution for anonymous calls', async (t) => {
  const env = await testApp(t, { baseDomain: 'help.example.com' });
  const acme = await tenantFixture(env, 'acme');
  const globex = await tenantFixture(env, 'globex');
  await env.deps.db('tenant_domains').insert({ domain: 'support.globex.test', tenant_id: globex.id, created_at: new Date() });

  const csrfTenant = async (headers: Record<string, string>) => {
    const res = await call(env, 'GET', '/auth/csrf', { headers });
    if (res.statusCode !== 200) return res.json().code as string;
    const token = res.json().csrf_token as string;
    for (const tenant of [acme, globex]) if (verifyCsrfToken(env.deps.box, token, tenant.id, new Date())) return tenant.slug;
    return 'unbound';
  };

  t.equal(await csrfTenant({ host: 'acme.help.example.com' }), 'acme', 'subdomain of the base domain');
  t.equal(await csrfTenant({ host: 'ACME.help.example.com:8443' }), 'acme', 'case and port do not matter');
  t.equal(await csrfTenant({ host: 'support.globex.test' }), 'globex', 'custom domain');
  t.equal(await csrfTenant({ host: 'support.globex.test', 'x-helpdesk-tenant': 'acme' }), 'acme', 'the header wins over Host');
  t.equal(await csrfTenant({ host: 'nobody.help.example.com' }), 'tenant_not_found');
  t.equal(await csrfTenant({ host: 'deep.acme.help.example.com' }), 'tenant_not_found', 'only one label below the base domain');
  t.equal(await csrfTenant({ host: 'help.example.com' }), 'tenant_not_found');
  t.equal(await csrfTenant({ 'x-helpdesk-tenant': 'bad slug!' }), 'tenant_not_found');

  // The token decides: B's token with A's header still acts in B.
  const me = await call(env, 'GET', '/auth/me', { token: globex.admin.token, tenant: 'acme' });
  t.equal(me.json().email, globex.admin.email);
});

t.test('HELPDESK_DEFAULT_TENANT serves single-tenant installs, and only when set', async (t) => {
  const env = await testApp(t, { defaultTenant: 'solo' });
  await tenantFixture(env, 'solo');
  const res = await call(env, 'GET', '/auth/csrf');
  t.equal(res.statusCode, 200);
  const off = await testApp(t);
  await tenantFixture(off, 'solo');
  t.equal((await call(off, 'GET', '/auth/csrf')).json().code, 'tenant_not_found');
});
