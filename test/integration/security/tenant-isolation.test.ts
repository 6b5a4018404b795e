import t from 'tap';
import { exampleBody } from '../../helpers/routes.js';
import { apiKeyFixture, call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { CLI_ACTOR } from '../../../src/core/context.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { createSession } from '../../../src/auth/sessions.js';

/**
 * Walks EVERY registered route as tenant B, aimed at tenant A's resources, and asserts that B can
 * neither see nor touch them: routes with ids answer 404, lists show none of A's data, anonymous
 * calls to token routes answer 401. Routes added later are walked too; a path parameter this test
 * cannot fill with one of A's ids fails the test until a fixture for it is added below.
 */

t.test('no route lets one tenant reach another tenant', async (t) => {
  const keys = licenseKeys();
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem });
  const a = await tenantFixture(env, 'tenant-a');
  const b = await tenantFixture(env, 'tenant-b');
  // Every feature for both, so the walk tests isolation and not licensing.
  await grantLicense(env, a.id, keys);
  await grantLicense(env, b.id, keys);

  // Tenant A's resources: their ids fill path parameters; their ids and emails must never appear in B's answers.
  const aCustomer = await userFixture(env, a.id, 'customer', 'secret-customer@tenant-a.example.com');
  const aAgent = await userFixture(env, a.id, 'agent', 'secret-agent@tenant-a.example.com');
  const aKey = await apiKeyFixture(env, a.id, a.admin.id, ['users:read']);
  // The ticket desk: a type, a custom field, a status and a ticket of A.
  const aType = (await call(env, 'POST', '/ticket-types', { token: a.admin.token, body: { name: 'Secret type of A' } })).json();
  const aField = (await call(env, 'POST', '/custom-fields', { token: a.admin.token, body: { key: 'secret_serial', label: 'Serial', kind: 'text' } })).json();
  const aStatus = (await call(env, 'GET', '/meta/statuses', { token: a.admin.token })).json().data[0];
  const aTicket = (await call(env, 'POST', '/tickets', {
    token: a.admin.token, body: { subject: 'Secret subject of A', body: 'Secret body of A', requester_id: aCustomer.id, type_id: aType.id, secret_serial: 'SN-A-1' },
  })).json();
  const aPost = async (path: string, body: unknown) => {
    const res = await call(env, 'POST', path, { token: a.admin.token, body });
    if (res.statusCode !== 201) throw new Error(`fixture ${path}: ${res.statusCode} ${res.body}`);
    return res.json() as { id: string };
  };
  const aOrg = await aPost('/organizations', { name: 'Secret Org of A', domains: ['tenant-a.example.com'] });
  const aTeam = await aPost('/teams', { name: 'Secret Team of A' });
  await aPost(`/teams/${aTeam.id}/members`, { user_id: aAgent.id, is_lead: true });
  const aSkill = await aPost('/skills', { name: 'Secret Skill of A' });
  await call(env, 'POST', `/users/${aAgent.id}/skills/${aSkill.id}`, { token: a.admin.token });
  // The email channel: A's mail settings (a public address literal: saving does not connect) and an edited template.
  const aMail = await call(env, 'POST', '/mail-settings', { token: a.admin.token, body: {
    smtp: { host: '93.184.215.14', port: 587, security: 'starttls', username: 'secret-smtp-user-of-a', password: 'pw', from_address: 'desk@tenant-a.example.com' },
  } });
  if (aMail.statusCode !== 200) throw new Error(`fixture /mail-settings: ${aMail.statusCode} ${aMail.body}`);
  const aTemplate = await call(env, 'PATCH', '/notification-templates/ticket.resolved', { token: a.admin.token, body: { subject: 'Secret template of A' } });
  if (aTemplate.statusCode !== 200) throw new Error(`fixture template: ${aTemplate.statusCode} ${aTemplate.body}`);

  /** Path parameter → one of A's ids, keyed by the path segment before `:id`, or by the parameter name. */
  const aIds: Record<string, string> = {
    users: aCustomer.id,
    'api-keys': aKey.id,
    userId: aAgent.id,
    statuses: aStatus.id,
    'ticket-types': aType.id,
    'custom-fields': aField.id,
    tickets: aTicket.id,
    organizations: aOrg.id,
    teams: aTeam.id,
    skills: aSkill.id,
    skillId: aSkill.id,
    customers: aCustomer.id,
  };
  /** Path parameters that name no tenant resource (the same for every tenant): B reaches its own. */
  const sharedParams: Record<string, string> = {
    identifier: 'ticket.resolved',
  };
  const secrets = [a.id, a.admin.id, a.admin.email, aCustomer.id, aCustomer.email, aAgent.id, aAgent.email, aKey.id, aKey.prefix,
    aType.id, aType.name, aField.id, 'secret_serial', aStatus.id, aTicket.id, 'Secret subject of A', 'SN-A-1',
    aOrg.id, 'Secret Org of A', 'tenant-a.example.com', aTeam.id, 'Secret Team of A', aSkill.id, 'Secret Skill of A',
    '93.184.215.14', 'secret-smtp-user-of-a', 'Secret template of A', a.id.replace(/-/g, '')];

  const freshBToken = () =>
    inTransaction(env.deps, { tenantId: b.id, actor: CLI_ACTOR, now: new Date() }, (ctx) => createSession(ctx, b.admin.id).then((s) => s.token));

  const defs = env.app.routeDefs.filter((d) => d.access.kind !== 'public');
  t.ok(defs.length >= 10, `walking ${defs.length} routes`);

  for (const def of defs) {
    const label = `${def.method} ${def.url}`;
    const params = [...def.url.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    let unresolved = false;
    const path = def.url.replace(/([\w-]+)\/:(\w+)/g, (_all, segment: string, param: string) => {
      const id = aIds[param] ?? sharedParams[param] ?? (param === 'id' ? aIds[segment] : undefined);
      if (!id) unresolved = true;
      return `${segment}/${id}`;
    });
    if (unresolved) {
      t.fail(`${label}: no fixture of tenant A for its path parameters (${params.join(', ')}); add one to aIds`);
      continue;
    }
    const body = exampleBody(def);
    const query = def.example?.query;

    // As B (token decides the tenant), also when B names A in the tenant header.
    const headerSets: Array<Record<string, string>> = [{}, { 'x-helpdesk-tenant': a.slug }];
    for (const headers of headerSets) {
      const res = await call(env, def.method, path, { token: await freshBToken(), body, query, headers });
      const where = `${label} as tenant B${Object.keys(headers).length ? ' naming A in X-Helpdesk-Tenant' : ''}`;
      t.not(res.statusCode, 500, `${where}: no server error (${res.body.slice(0, 200)})`);
      if (params.length && !params.every((p) => p in sharedParams)) t.equal(res.statusCode, 404, `${where}: A's resource is not found (${res.body.slice(0, 160)})`);
      // The 404 message may echo the id the caller sent itself; anything else of A is a leak.
      const leaked = secrets.filter((s) => res.body.includes(s) && !path.includes(s));
      t.same(leaked, [], `${where}: leaks nothing of A`);
    }

    // Anonymous: token routes refuse; tenant routes aimed at A with B's CSRF token refuse too.
    if (def.access.kind === 'token') {
      const res = await call(env, def.method, path, { body, query });
      t.equal(res.statusCode, 401, `${label} anonymous: 401`);
    }
  }

  // Shared path parameters reached B's own records; A's stay as A left them.
  const aTemplates = (await call(env, 'GET', '/notification-templates', { token: a.admin.token })).json().data;
  t.equal(aTemplates.find((x: { identifier: string }) => x.identifier === 'ticket.resolved').subject, 'Secret template of A', "A's template untouched");

  t.same(env.guard.violations, [], 'no query touched a tenant-owned table without tenant_id');
});

t.test('a CSRF token of one tenant is refused by another', async (t) => {
  const env = await testApp(t);
  const a = await tenantFixture(env, 'csrf-a');
  const b = await tenantFixture(env, 'csrf-b');
  const csrfRoutes = env.app.routeDefs.filter((d) => d.access.kind === 'csrf');
  const bCsrf = (await call(env, 'GET', '/auth/csrf', { tenant: b.slug })).json().csrf_token as string;
  t.ok(bCsrf, 'B obtained a CSRF token');
  for (const def of csrfRoutes) {
    const res = await call(env, def.method, def.url, { tenant: a.slug, csrf: bCsrf, body: exampleBody(def) });
    t.equal(res.statusCode, 403, `${def.method} ${def.url}: 403`);
    t.equal(res.json().code, 'csrf_invalid');
  }
  const unknownTenant = await call(env, 'GET', '/auth/csrf', { tenant: 'no-such-tenant' });
  t.equal(unknownTenant.statusCode, 404);
  t.equal(unknownTenant.json().code, 'tenant_not_found');
  const noTenant = await call(env, 'GET', '/auth/csrf');
  t.equal(noTenant.json().code, 'tenant_not_found');
});
