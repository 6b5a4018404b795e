import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { openTicket, vocab } from '../../helpers/tickets.js';
import { CLI_ACTOR } from '../../../src/core/context.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { csatUrlFor } from '../../../src/csat/surveys.js';
import { brandingFor } from '../../../src/branding/service.js';

/**
 * Branding (CONTRACT §19): defaults, validation (hex colours, https logo), the sanitised footer,
 * scopes, audit, the public route by header or host, and its use in the CSAT page and mail.
 */
t.setTimeout(180_000);
const env = await testApp(t);

t.test('defaults, validation, sanitising, access, audit, public route', async (t) => {
  const tenant = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  let res = await call(env, 'GET', '/branding', { token: tenant.admin.token });
  t.equal(res.statusCode, 200);
  t.same(res.json(), {
    name: `Tenant ${tenant.slug}`, logo_url: null, primary_color: '#0b57d0', accent_color: '#f5a623',
    help_center_title: `Tenant ${tenant.slug} Help Center`, support_email: null, footer_html: '', updated_at: null,
  });

  res = await call(env, 'PATCH', '/branding', { token: tenant.admin.token, body: { primary_color: 'blue', accent_color: '#12345', logo_url: 'http://acme.example/logo.png', support_email: 'nope' } });
  t.equal(res.statusCode, 422);
  t.same(res.json().details.map((d: { field: string }) => d.field).sort(), ['accent_color', 'logo_url', 'primary_color', 'support_email']);
  t.match(res.json().details.find((d: { field: string }) => d.field === 'logo_url').message, /https/);
  res = await call(env, 'PATCH', '/branding', { token: tenant.admin.token, body: { logo_url: 'https://user:pw@acme.example/logo.png' } });
  t.equal(res.statusCode, 422, 'no credentials in the logo URL');
  res = await call(env, 'PATCH', '/branding', { token: tenant.admin.token, body: {} });
  t.equal(res.statusCode, 422, 'nothing to change');
  res = await call(env, 'PATCH', '/branding', { token: agent.token, body: { name: 'x' } });
  t.equal(res.statusCode, 403, 'agents hold no branding scope');
  t.same(res.json().details, { required_scope: 'branding:write' });
  t.equal((await env.deps.db('tenant_branding').where({ tenant_id: tenant.id })).length, 0, 'refused changes wrote nothing');

  const footer = '<p onclick="steal()">Acme Inc. <a href="https://acme.example/privacy">Privacy</a> <a href="javascript:alert(1)">x</a><script>alert(1)</script><img src="https://x.example/t.gif"><style>body{}</style></p>';
  res = await call(env, 'PATCH', '/branding', {
    token: tenant.admin.token,
    body: { name: 'Acme Support', primary_color: '#A1B2C3', accent_color: '#F0a', logo_url: 'https://cdn.acme.example/logo.png', support_email: 'help@acme.example', footer_html: footer },
  });
  t.equal(res.statusCode, 200);
  const saved = res.json();
  t.match(saved, { name: 'Acme Support', primary_color: '#a1b2c3', accent_color: '#ff00aa', logo_url: 'https://cdn.acme.example/logo.png', help_center_title: 'Acme Support Help Center', support_email: 'help@acme.example' });
  t.equal(saved.footer_html, '<p>Acme Inc. <a href="https://acme.example/privacy" target="_blank" rel="noopener noreferrer">Privacy</a> <a target="_blank" rel="noopener noreferrer">x</a></p>');
  t.notMatch(saved.footer_html, /script|onclick|javascript|img|style/);
  t.same((await call(env, 'GET', '/branding', { token: tenant.admin.token })).json(), saved);
  t.same(await brandingFor(env.deps.db, tenant.id), saved, 'brandingFor, the read for other areas, answers the same');

  // null restores a default
  res = await call(env, 'PATCH', '/branding', { token: tenant.admin.token, body: { accent_color: null, help_center_title: 'Acme Help' } });
  t.match(res.json(), { accent_color: '#f5a623', help_center_title: 'Acme Help', primary_color: '#a1b2c3' });

  const audit = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'branding.updated' }).orderBy('id');
  t.equal(audit.length, 2);
  t.same(audit[1].changes.accent_color, { from: '#ff00aa', to: null });

  // Public: by header, by the tenant's custom domain; unresolved: 404 tenant_not_found.
  res = await call(env, 'GET', '/branding/public', { tenant: tenant.slug });
  t.equal(res.statusCode, 200);
  t.equal(res.json().name, 'Acme Support');
  await env.deps.db('tenant_domains').insert({ domain: `help.${tenant.slug}.example`, tenant_id: tenant.id, created_at: new Date() });
  res = await call(env, 'GET', '/branding/public', { headers: { host: `help.${tenant.slug}.example` } });
  t.equal(res.statusCode, 200);
  t.equal(res.json().help_center_title, 'Acme Help');
  res = await call(env, 'GET', '/branding/public', { headers: { host: 'unknown.example' } });
  t.equal(res.statusCode, 404);
  t.equal(res.json().code, 'tenant_not_found');

  // Another tenant keeps its own (default) branding.
  const other = await tenantFixture(env);
  t.equal((await call(env, 'GET', '/branding/public', { tenant: other.slug })).json().name, `Tenant ${other.slug}`);
});

t.test('the CSAT page and notification mail carry the branding', async (t) => {
  const tenant = await tenantFixture(env);
  const customer = await userFixture(env, tenant.id, 'customer');
  const v = await vocab(env, tenant.admin.token);
  await call(env, 'PATCH', '/csat/settings', { token: tenant.admin.token, body: { enabled: true } });

  // Before any branding, mail is as it always was.
  const plain = await openTicket(env, tenant.admin.token, { requester_id: customer.id, subject: 'Before branding' });
  await call(env, 'POST', `/tickets/${plain.id}/messages`, { token: tenant.admin.token, body: { body: 'First answer' } });
  const before = await env.deps.db('notifications').where({ tenant_id: tenant.id, ticket_id: plain.id });
  t.ok(before.length > 0, 'a notification was written');
  for (const n of before) t.notMatch(n.body_html, /Globex Care/);

  await call(env, 'PATCH', '/branding', {
    token: tenant.admin.token,
    body: { name: 'Globex Care', primary_color: '#123456', accent_color: '#abcdef', logo_url: 'https://cdn.globex.example/l.png', footer_html: '<p>Globex &amp; Co. <a href="https://globex.example/terms">Terms</a></p>' },
  });
  const ticket = await openTicket(env, tenant.admin.token, { requester_id: customer.id, subject: 'Toaster' });
  await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: tenant.admin.token, body: { body: 'We are on it' } });
  const mails = await env.deps.db('notifications').where({ tenant_id: tenant.id, ticket_id: ticket.id });
  t.ok(mails.length > 0);
  for (const n of mails) {
    t.match(n.body_html, /<strong style="color:#123456">Globex Care<\/strong>/, 'branded header');
    t.match(n.body_html, /<img src="https:\/\/cdn\.globex\.example\/l\.png"/, 'logo');
    t.match(n.body_html, /Globex &amp; Co\. <a href="https:\/\/globex\.example\/terms"/, 'footer');
    t.match(n.body_text, /Globex Care/, 'the text part too');
  }

  const r = await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: tenant.admin.token, body: { status_id: v.status.resolved } });
  t.equal(r.statusCode, 200);
  const url = await inTransaction(env.deps, { tenantId: tenant.id, actor: CLI_ACTOR, now: new Date() }, (ctx) => csatUrlFor(ctx, ticket.id));
  const page = await env.app.inject({ method: 'GET', url: new URL(url!).pathname });
  t.equal(page.statusCode, 200);
  t.match(page.body, /<header class="brand"><img src="https:\/\/cdn\.globex\.example\/l\.png" alt=""><span>Globex Care<\/span><\/header>/);
  t.match(page.body, /button\{background:#123456\}/);
  t.match(page.body, /<footer class="brand"><p>Globex &amp; Co\./);
  t.same(env.guard.violations, [], 'every query was tenant-scoped');
});
