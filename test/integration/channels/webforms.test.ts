import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { RATE_LIMIT } from '../../../src/webforms/service.js';

/** Web forms (CONTRACT §17): definition, the public HTML form, submissions with token, honeypot and rate limit. */
t.setTimeout(120_000);

t.test('web forms', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const fields = [{ name: 'name', type: 'text', required: true }, { name: 'email', type: 'email', required: true }, { name: 'topic', type: 'text' }, { name: 'message', type: 'textarea', required: true }];
  let form: { id: string; public_url: string; embed_snippet: string };

  await t.test('definition: exactly one email field; admins only; tenant-scoped', async (t) => {
    const none = await call(env, 'POST', '/webforms', { token: tenant.admin.token, body: { title: 'x', fields: [{ name: 'message', type: 'textarea' }] } });
    t.equal(none.statusCode, 422);
    t.match(none.json().details, [{ field: 'fields', message: /exactly one field of type email/ }]);
    const two = await call(env, 'POST', '/webforms', { token: tenant.admin.token, body: { title: 'x', fields: [{ name: 'a', type: 'email' }, { name: 'b', type: 'email' }] } });
    t.equal(two.statusCode, 422);
    const reserved = await call(env, 'POST', '/webforms', { token: tenant.admin.token, body: { title: 'x', fields: [{ name: 'email', type: 'email' }, { name: 'homepage', type: 'text' }] } });
    t.match(reserved.json().details, [{ field: 'fields[1].name', message: /reserved/ }]);
    t.equal((await call(env, 'POST', '/webforms', { token: agent.token, body: { title: 'Contact', fields } })).statusCode, 403);
    const res = await call(env, 'POST', '/webforms', { token: tenant.admin.token, body: { title: 'Contact us', fields } });
    t.equal(res.statusCode, 201, res.body);
    form = res.json();
    t.match(form, { title: 'Contact us', fields: [{ name: 'name', label: 'Name', required: true }, { name: 'email', type: 'email', required: true }, { name: 'topic', required: false }, { name: 'message', type: 'textarea' }] });
    t.equal(form.public_url, `${env.config.siteUrl}/forms/${form.id}`);
    t.match(form.embed_snippet, new RegExp(`<iframe src="${env.config.siteUrl}/forms/${form.id}"`));
    t.equal((await call(env, 'GET', `/webforms/${form.id}`, { token: agent.token })).statusCode, 200);
    t.equal((await call(env, 'GET', `/webforms/${form.id}`, { token: other.admin.token })).statusCode, 404);
  });

  const pageToken = async () => {
    const page = await env.app.inject({ method: 'GET', url: `/forms/${form.id}` });
    return /name="form_token" value="([^"]+)"/.exec(page.body)![1]!.replace(/&amp;/g, '&');
  };

  await t.test('the public page is HTML with the fields, a form token and a honeypot', async (t) => {
    const page = await env.app.inject({ method: 'GET', url: `/forms/${form.id}` });
    t.equal(page.statusCode, 200);
    t.match(page.headers['content-type'], /text\/html/);
    t.match(page.body, /<h1>Contact us<\/h1>/);
    t.match(page.body, /<label for="f-email">Email \*<\/label>/);
    t.match(page.body, /<textarea id="f-message" name="message" required/);
    t.match(page.body, /name="homepage"/);
    t.match(page.body, new RegExp(`action="/api/v1/webforms/${form.id}/submissions"`));
    t.notMatch(String(page.headers['content-security-policy']), /frame-ancestors/, 'embeddable');
    t.equal((await env.app.inject({ method: 'GET', url: '/forms/01900000-0000-7000-8000-000000000000' })).statusCode, 404);
  });

  await t.test('submissions: token, honeypot, fields, then a webform ticket from the email requester', async (t) => {
    const good = { name: 'Ada Lovelace', email: 'Ada@Example.com', topic: 'Billing question', message: 'Please resend my invoice.', homepage: '' };
    const noToken = await call(env, 'POST', `/webforms/${form.id}/submissions`, { body: good });
    t.equal(noToken.statusCode, 403);
    const forged = await call(env, 'POST', `/webforms/${form.id}/submissions`, { body: { ...good, form_token: `${Date.now()}.forged` } });
    t.equal(forged.statusCode, 403);
    const stale = (await pageToken()).replace(/^\d+/, String(Date.now() - 25 * 3600 * 1000));
    t.equal((await call(env, 'POST', `/webforms/${form.id}/submissions`, { body: { ...good, form_token: stale } })).statusCode, 403, 'a changed issue time breaks the token');
    const token = await pageToken();
    const bot = await call(env, 'POST', `/webforms/${form.id}/submissions`, { body: { ...good, homepage: 'http://spam.example', form_token: token } });
    t.equal(bot.statusCode, 422);
    t.match(bot.json().details, [{ field: 'homepage' }]);
    const missing = await call(env, 'POST', `/webforms/${form.id}/submissions`, { body: { email: 'not-an-email', form_token: token, extra: 'x' } });
    t.equal(missing.statusCode, 422);
    t.match(missing.json().details, [{ field: 'extra' }, { field: 'name', message: 'is required' }, { field: 'email', message: /email/ }, { field: 'message' }]);
    t.equal((await env.deps.db('tickets').where({ tenant_id: tenant.id })).length, 0, 'nothing created so far');

    const ok = await call(env, 'POST', `/webforms/${form.id}/submissions`, { body: { ...good, form_token: token } });
    t.equal(ok.statusCode, 201, ok.body);
    t.match(ok.json(), { ticket_id: String, ticket_number: 1 });
    const ticket = (await call(env, 'GET', `/tickets/${ok.json().ticket_id}`, { token: tenant.admin.token })).json();
    t.match(ticket, { channel: 'webform', subject: 'Contact us: Billing question' });
    const requester = await env.deps.db('users').where({ tenant_id: tenant.id, id: ticket.requester_id }).first();
    t.match(requester, { email: 'ada@example.com', name: 'Ada Lovelace', role: 'customer' });
    const [first] = (await call(env, 'GET', `/tickets/${ticket.id}/messages`, { token: tenant.admin.token })).json().data;
    t.match(first.body, /Name:\nAda Lovelace[\s\S]*Topic:\nBilling question[\s\S]*Message:\nPlease resend my invoice\./);
    t.notMatch(first.body, /form_token|homepage/);
  });

  await t.test('a browser form post gets the page back with a notice', async (t) => {
    const token = await pageToken();
    const res = await env.app.inject({
      method: 'POST', url: `/api/v1/webforms/${form.id}/submissions`, headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ name: 'Bob', email: 'bob@example.com', message: 'Hi', homepage: '', form_token: token }).toString(),
    });
    t.equal(res.statusCode, 201);
    t.match(res.headers['content-type'], /text\/html/);
    t.match(res.body, /Thank you: we received your message \(ticket #2\)/);
  });

  await t.test('rate limit per form and client address', async (t) => {
    const token = await pageToken();
    const body = { name: 'Flood', email: 'flood@example.com', message: 'again', form_token: token };
    const answers: number[] = [];
    for (let i = 0; i < RATE_LIMIT; i++) answers.push((await call(env, 'POST', `/webforms/${form.id}/submissions`, { body })).statusCode);
    t.ok(answers.filter((s) => s === 201).length >= RATE_LIMIT - 2, 'the first ones pass (two were used above)');
    const limited = await call(env, 'POST', `/webforms/${form.id}/submissions`, { body });
    t.equal(limited.statusCode, 429);
    t.ok(Number(limited.headers['retry-after']) > 0);
    t.equal((await env.deps.db('webform_submissions').where({ tenant_id: tenant.id })).length, RATE_LIMIT, 'no ticket over the limit');
  });

  await t.test('another tenant cannot reach the form by API; deleting keeps tickets', async (t) => {
    t.equal((await call(env, 'DELETE', `/webforms/${form.id}`, { token: other.admin.token })).statusCode, 404);
    t.equal((await call(env, 'DELETE', `/webforms/${form.id}`, { token: tenant.admin.token })).statusCode, 204);
    t.equal((await env.app.inject({ method: 'GET', url: `/forms/${form.id}` })).statusCode, 404);
    t.ok((await env.deps.db('tickets').where({ tenant_id: tenant.id, channel: 'webform' })).length >= 1);
  });
});
