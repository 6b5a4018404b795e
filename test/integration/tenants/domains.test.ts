import t from 'tap';
import { call, testApp, tenantFixture } from '../../helpers/app.js';
import { runCommand, tempDataDir } from '../../helpers/cli.js';
import TenantDomainAdd from '../../../commands/tenant/domain/add.js';
import TenantDomainRemove from '../../../commands/tenant/domain/remove.js';
import TenantDomainList from '../../../commands/tenant/domain/list.js';

/**
 * `helpdesk tenant domain add|remove|list` (CONTRACT §19) and host resolution (§3): a request whose
 * Host is a tenant's domain resolves to that tenant; a name belongs to one tenant; removal ends it.
 */
t.test('custom domains through the CLI resolve requests by Host', async (t) => {
  const app = await testApp(t);
  const env = { DATABASE_URL: app.databaseUrl, HELPDESK_DATA_DIR: tempDataDir(t), HELPDESK_SECRET_KEY: 'test-secret-key', LOG_LEVEL: 'silent' };
  const acme = await tenantFixture(app);
  const beta = await tenantFixture(app);
  await call(app, 'PATCH', '/branding', { token: acme.admin.token, body: { name: 'Acme Care' } });

  const host = (h: string) => call(app, 'GET', '/branding/public', { headers: { host: h } });
  t.equal((await host('help.acme.example')).statusCode, 404, 'unknown before');

  const added = await runCommand(TenantDomainAdd, ['Help.Acme.Example.', '--tenant', acme.slug, '--json'], env);
  t.equal(added.code, 0, added.stderr);
  t.match(added.json(), { domain: 'help.acme.example', tenant_id: acme.id });
  const text = await runCommand(TenantDomainAdd, ['support.acme.example', '--tenant', acme.slug], env);
  t.equal(text.stdout, `support.acme.example now resolves to tenant ${acme.slug}\n`);

  for (const h of ['help.acme.example', 'HELP.acme.example:8443', 'support.acme.example']) {
    const res = await host(h);
    t.equal(res.statusCode, 200, h);
    t.equal(res.json().name, 'Acme Care', `${h} resolves to acme`);
  }
  // A CSRF token fetched by Host is the tenant's: it works with the tenant's slug too.
  const csrf = await call(app, 'GET', '/auth/csrf', { headers: { host: 'help.acme.example' } });
  t.equal(csrf.statusCode, 200);

  const list = await runCommand(TenantDomainList, ['--tenant', acme.slug, '--json'], env);
  t.same(list.json().map((d: { domain: string }) => d.domain), ['help.acme.example', 'support.acme.example']);
  const listText = await runCommand(TenantDomainList, ['--tenant', acme.slug], env);
  t.match(listText.stdout, /help\.acme\.example/);
  t.same((await runCommand(TenantDomainList, ['--tenant', beta.slug, '--json'], env)).json(), []);

  // One tenant per name; bad names; unknown tenant.
  const taken = await runCommand(TenantDomainAdd, ['help.acme.example', '--tenant', beta.slug, '--json'], env);
  t.not(taken.code, 0);
  t.equal(taken.json().error.code, 'already_exists');
  for (const bad of ['127.0.0.1', 'localhost', 'a..b', '-x.example', 'exa mple.com', 'x.123']) {
    const res = await runCommand(TenantDomainAdd, [bad, '--tenant', acme.slug, '--json'], env);
    t.equal(res.code, 2, bad);
    t.equal(res.json().error.code, 'validation_failed', bad);
  }
  const nobody = await runCommand(TenantDomainAdd, ['x.example', '--tenant', 'nobody', '--json'], env);
  t.equal(nobody.json().error.code, 'tenant_not_found');
  t.equal((await runCommand(TenantDomainRemove, ['help.acme.example', '--tenant', beta.slug, '--json'], env)).json().error.code, 'resource_not_found', "another tenant cannot remove acme's name");

  const removed = await runCommand(TenantDomainRemove, ['help.acme.example', '--tenant', acme.slug, '--json'], env);
  t.same(removed.json(), { removed: 'help.acme.example' });
  t.equal((await host('help.acme.example')).statusCode, 404, 'no longer resolves');
  t.equal((await host('support.acme.example')).statusCode, 200);

  const audit = await app.deps.db('audit_log').where({ tenant_id: acme.id }).whereIn('action', ['tenant.domain_added', 'tenant.domain_removed']).orderBy('id');
  t.same(audit.map((a) => [a.action, a.changes.domain, a.actor_type]), [
    ['tenant.domain_added', 'help.acme.example', 'cli'], ['tenant.domain_added', 'support.acme.example', 'cli'], ['tenant.domain_removed', 'help.acme.example', 'cli'],
  ]);
});
