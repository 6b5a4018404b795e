import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { count, openTicket, vocab } from '../../helpers/tickets.js';
import { CLI_ACTOR } from '../../../src/core/context.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { csatUrlFor } from '../../../src/csat/surveys.js';

/** CSAT (CONTRACT §14): settings, survey tokens, the page and its form, one click, the JSON route. */

const urlFor = (tenantId: string, ticketId: string) =>
  inTransaction(env.deps, { tenantId, actor: CLI_ACTOR, now: new Date() }, (ctx) => csatUrlFor(ctx, ticketId));

/** The path of a survey URL ({site_url}/csat/<token>). */
const pathOf = (url: string) => new URL(url).pathname;

/** Reads the page's form the way a browser would: its action and hidden fields. */
function formOf(html: string): { action: string; hidden: Record<string, string> } {
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error('no form on the page');
  const hidden = Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
  return { action: action.replace(/&amp;/g, '&'), hidden };
}

t.setTimeout(180_000);
// One app and database for the file (creating one is the slow part); each test has its own tenant.
const env = await testApp(t);

async function setup(settings: Record<string, unknown> = {}) {
  const tenant = await tenantFixture(env);
  const customer = await userFixture(env, tenant.id, 'customer');
  const agent = await userFixture(env, tenant.id, 'agent');
  const v = await vocab(env, tenant.admin.token);
  const res = await call(env, 'PATCH', '/csat/settings', {
    token: tenant.admin.token, body: { enabled: true, question: 'How did we do?', reasons: ['Fast answer', 'Friendly agent'], ...settings },
  });
  if (res.statusCode !== 200) throw new Error(`PATCH /csat/settings ${res.statusCode} ${res.body}`);
  const resolve = async (ticketId: string, key = 'resolved') => {
    const r = await call(env, 'PATCH', `/tickets/${ticketId}`, { token: agent.token, body: { status_id: v.status[key] } });
    if (r.statusCode !== 200) throw new Error(`resolve ${r.statusCode} ${r.body}`);
  };
  return { tenant, customer, agent, v, resolve };
}

t.test('settings: defaults, validation, admin only, audited', async (t) => {
  const tenant = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const defaults = await call(env, 'GET', '/csat/settings', { token: tenant.admin.token });
  t.equal(defaults.statusCode, 200);
  t.same(defaults.json(), { enabled: false, trigger: 'resolved', question: 'How would you rate the support you received?', comment_enabled: true, reasons: [] });

  const bad = await call(env, 'PATCH', '/csat/settings', { token: tenant.admin.token, body: { question: '   ', reasons: ['Speed', ' speed ', '  '] } });
  t.equal(bad.statusCode, 422);
  t.same(bad.json().details.map((d: { field: string }) => d.field).sort(), ['question', 'reasons.1', 'reasons.2']);
  const empty = await call(env, 'PATCH', '/csat/settings', { token: tenant.admin.token, body: { reasons: [''] } });
  t.equal(empty.json().details[0].field, 'reasons.0');
  const badTrigger = await call(env, 'PATCH', '/csat/settings', { token: tenant.admin.token, body: { trigger: 'pending' } });
  t.equal(badTrigger.statusCode, 422);
  t.equal(badTrigger.json().details[0].field, 'trigger');
  t.equal((await call(env, 'PATCH', '/csat/settings', { token: agent.token, body: { enabled: true } })).statusCode, 403);
  t.equal(await count(env, 'csat_settings', tenant.id), 0, 'nothing written by refused changes');

  const ok = await call(env, 'PATCH', '/csat/settings', { token: tenant.admin.token, body: { enabled: true, trigger: 'closed', reasons: [' Speed '] } });
  t.equal(ok.statusCode, 200);
  t.same(ok.json(), { enabled: true, trigger: 'closed', question: 'How would you rate the support you received?', comment_enabled: true, reasons: ['Speed'] });
  t.same((await call(env, 'GET', '/csat/settings', { token: tenant.admin.token })).json(), ok.json());
  const audit = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'csat_settings.updated' });
  t.equal(audit.length, 1, 'one audit row');
});

t.test('the survey flow: resolved ticket → page → form post → one click → JSON, each replacing the last', async (t) => {
  const { tenant, customer, resolve } = await setup();
  const ticket = await openTicket(env, tenant.admin.token, { requester_id: customer.id, subject: 'Printer on fire' });
  t.equal(await urlFor(tenant.id, ticket.id), null, 'no survey before the trigger category');
  await resolve(ticket.id);
  t.equal(await count(env, 'csat_surveys', tenant.id), 1, 'entering resolved issued a survey');
  const url = (await urlFor(tenant.id, ticket.id))!;
  t.match(url, /^http:\/\/127\.0\.0\.1:8080\/csat\/cs_[A-Za-z0-9_-]{43}$/, '{site_url}/csat/<token>');
  t.equal(await urlFor(tenant.id, ticket.id), url, 'the same link every time');
  const path = pathOf(url);
  const token = path.split('/').pop()!;

  // The page, as a browser fetches it.
  const page = await env.app.inject({ method: 'GET', url: path, headers: { accept: 'text/html' } });
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-type'], /^text\/html/);
  t.match(page.headers['content-security-policy'], /default-src 'none'/);
  t.notMatch(page.body, /<script/i, 'no script');
  t.match(page.body, /<html lang="en">/);
  t.match(page.body, /name="viewport"/);
  t.match(page.body, /<legend>How did we do\?<\/legend>/);
  t.match(page.body, /Printer on fire/);
  t.equal([...page.body.matchAll(/type="radio" name="score"/g)].length, 5, 'scores 1–5');
  t.match(page.body, /<option value="Fast answer">/);
  t.match(page.body, /<textarea id="comment" name="comment"/);

  // Its form, posted as a browser would.
  const form = formOf(page.body);
  t.equal(form.action, path);
  const posted = await env.app.inject({
    method: 'POST', url: form.action,
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', 'sec-fetch-site': 'same-origin' },
    payload: new URLSearchParams({ ...form.hidden, score: '4', reason: 'Fast answer', comment: 'Quick & kind <3' }).toString(),
  });
  t.equal(posted.statusCode, 200, posted.body.slice(0, 300));
  t.match(posted.body, /role="status"/);
  t.match(posted.body, /Quick &amp; kind &lt;3<\/textarea>/, 'the comment comes back escaped');
  let shown = (await call(env, 'GET', `/tickets/${ticket.id}`, { token: tenant.admin.token })).json();
  t.match(shown.csat, { score: 4, comment: 'Quick & kind <3', reason: 'Fast answer' });
  t.match(shown.csat.submitted_at, /Z$/);

  // One click from the mail replaces it.
  const click = await env.app.inject({ method: 'GET', url: `${path}?score=2`, headers: { accept: 'text/html' } });
  t.equal(click.statusCode, 200);
  t.match(click.body, /value="2" required checked/);
  shown = (await call(env, 'GET', `/tickets/${ticket.id}`, { token: tenant.admin.token })).json();
  t.equal(shown.csat.score, 2);
  t.equal(shown.csat.comment, null, 'a one-click answer is the score alone');

  // The JSON route, with the token as the only credential.
  const json = await call(env, 'POST', `/csat/${token}`, { body: { score: 5, comment: '  Great  ', reason: 'friendly agent' } });
  t.equal(json.statusCode, 200);
  t.match(json.json(), { ticket_id: ticket.id, score: 5, comment: 'Great', reason: 'Friendly agent' });
  t.equal(await count(env, 'csat_surveys', tenant.id), 1, 'answers replace each other on one survey');
  const row = await env.deps.db('csat_surveys').where({ tenant_id: tenant.id }).first();
  t.equal(row.score, 5);

  const events = await env.deps.db('events').where({ tenant_id: tenant.id, type: 'ticket.csat_rating_submitted' }).orderBy('created_at');
  t.equal(events.length, 3, 'one event per submission');
  t.same(events[2].data, { ticket_id: ticket.id, score: 5, comment: 'Great', reason: 'Friendly agent', submitted_at: json.json().submitted_at });
  t.equal(events[2].actor_id, customer.id, 'attributed to the requester');
  const timeline = (await call(env, 'GET', `/tickets/${ticket.id}/events`, { token: tenant.admin.token }));
  if (timeline.statusCode === 200) t.ok(timeline.json().data.some((e: { type: string }) => e.type === 'csat_rating_submitted'), 'on the timeline');

  // Reopen and resolve again: a new survey for the new resolution.
  const v = await vocab(env, tenant.admin.token);
  await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: tenant.admin.token, body: { status_id: v.status.open } });
  await resolve(ticket.id);
  t.equal(await count(env, 'csat_surveys', tenant.id), 2);
  t.not(await urlFor(tenant.id, ticket.id), url, 'the resolved mail of the new resolution carries the new link');
  t.same(env.guard.violations, []);
});

t.test('refusals: bad input, wrong form token, cross-site posts, unknown and expired tokens', async (t) => {
  const { tenant, customer, resolve } = await setup({ comment_enabled: false });
  const ticket = await openTicket(env, tenant.admin.token, { requester_id: customer.id });
  await resolve(ticket.id);
  const path = pathOf((await urlFor(tenant.id, ticket.id))!);
  const token = path.split('/').pop()!;
  const unrated = () => env.deps.db('csat_surveys').where({ tenant_id: tenant.id }).whereNotNull('submitted_at').count({ n: '*' }).then((r) => Number(r[0]!.n));

  for (const body of [{ score: 0 }, { score: 6 }, { score: '5' }, {}, { score: 3, extra: 1 }, { score: 3, comment: 'x'.repeat(2001) }]) {
    const res = await call(env, 'POST', `/csat/${token}`, { body });
    t.equal(res.statusCode, 422, `refused: ${JSON.stringify(body).slice(0, 60)}`);
  }
  const badReason = await call(env, 'POST', `/csat/${token}`, { body: { score: 3, reason: 'Not offered' } });
  t.equal(badReason.statusCode, 422);
  t.equal(badReason.json().details[0].field, 'reason');
  t.equal(await unrated(), 0, 'nothing half-written');
  t.equal(await count(env, 'events', tenant.id) > 0, true);
  t.equal((await env.deps.db('events').where({ tenant_id: tenant.id, type: 'ticket.csat_rating_submitted' })).length, 0, 'no event');

  // Comments off: the comment is not kept.
  const noComment = await call(env, 'POST', `/csat/${token}`, { body: { score: 3, comment: 'ignored' } });
  t.equal(noComment.json().comment, null);
  const page = await env.app.inject({ method: 'GET', url: path, headers: { accept: 'text/html' } });
  t.notMatch(page.body, /<textarea/, 'no comment field when comments are off');

  const forged = await env.app.inject({
    method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    payload: 'score=1&form_token=forged',
  });
  t.equal(forged.statusCode, 403);
  t.match(forged.body, /role="alert"/);
  const crossSite = await env.app.inject({
    method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site' },
    payload: new URLSearchParams({ ...formOf(page.body).hidden, score: '1' }).toString(),
  });
  t.equal(crossSite.statusCode, 403);
  t.equal(crossSite.json().code, 'forbidden');
  t.equal((await env.deps.db('csat_surveys').where({ tenant_id: tenant.id }).first()).score, 3, 'forged posts changed nothing');
  // The JSON API stays JSON-only.
  const formToApi = await env.app.inject({ method: 'POST', url: `/api/v1/csat/${token}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'score=1' });
  t.equal(formToApi.statusCode, 415);

  for (const unknown of ['cs_' + 'A'.repeat(43), 'nope', 'cs_%00']) {
    const json = await call(env, 'POST', `/csat/${unknown}`, { body: { score: 4 } });
    t.equal(json.statusCode, 404, `unknown ${unknown}`);
    const html = await env.app.inject({ method: 'GET', url: `/csat/${unknown}`, headers: { accept: 'text/html', 'accept-language': 'de-DE,de;q=0.9' } });
    t.equal(html.statusCode, 404);
    if (unknown !== 'cs_%00') t.match(html.body, /Umfrage nicht verfügbar/);
  }
  const plain = await env.app.inject({ method: 'GET', url: '/csat/cs_unknown' });
  t.equal(plain.json().code, 'resource_not_found', 'a JSON client gets the contract error');

  // Thirty days later the token is gone.
  await env.deps.db('csat_surveys').where({ tenant_id: tenant.id }).update({ expires_at: new Date(Date.now() - 1000) });
  t.equal((await call(env, 'POST', `/csat/${token}`, { body: { score: 4 } })).statusCode, 404, 'expired: 404 like unknown');
  t.equal((await env.app.inject({ method: 'GET', url: `${path}?score=5` })).statusCode, 404);
  t.equal((await env.deps.db('csat_surveys').where({ tenant_id: tenant.id }).first()).score, 3);
});

t.test('the page speaks the customer\'s language', async (t) => {
  const { tenant, customer, resolve } = await setup({ question: 'How would you rate the support you received?' });
  await env.deps.db('users').where({ tenant_id: tenant.id, id: customer.id }).update({ locale: 'de-AT' });
  const ticket = await openTicket(env, tenant.admin.token, { requester_id: customer.id });
  await resolve(ticket.id);
  const path = pathOf((await urlFor(tenant.id, ticket.id))!);
  const page = await env.app.inject({ method: 'GET', url: path, headers: { accept: 'text/html' } });
  t.match(page.body, /<html lang="de">/);
  t.match(page.body, /Wie zufrieden waren Sie mit unserem Support\?/, 'the default question, translated');
  t.match(page.body, /Bewertung senden/);
});

t.test('trigger category, CSAT off, tenants', async (t) => {
  const { tenant, customer, resolve } = await setup({ trigger: 'closed' });
  const ticket = await openTicket(env, tenant.admin.token, { requester_id: customer.id });
  await resolve(ticket.id);
  t.equal(await count(env, 'csat_surveys', tenant.id), 0, 'resolved is not the trigger');
  t.equal(await urlFor(tenant.id, ticket.id), null);
  await resolve(ticket.id, 'closed');
  t.equal(await count(env, 'csat_surveys', tenant.id), 1, 'closed is');

  const other = await tenantFixture(env);
  await call(env, 'PATCH', '/csat/settings', { token: other.admin.token, body: { enabled: true, trigger: 'closed' } });
  t.equal(await urlFor(other.id, ticket.id), null, 'another tenant cannot reach the ticket\'s survey');

  await call(env, 'PATCH', '/csat/settings', { token: tenant.admin.token, body: { enabled: false } });
  t.equal(await urlFor(tenant.id, ticket.id), null, 'CSAT off: no link');
  const second = await openTicket(env, tenant.admin.token, { requester_id: customer.id });
  await resolve(second.id, 'closed');
  t.equal(await count(env, 'csat_surveys', tenant.id), 1, 'CSAT off: no survey');
  t.same(env.guard.violations, []);
});

t.test('reports read ratings through indexes', async (t) => {
  const tenant = await tenantFixture(env);
  const plans = await env.deps.db.transaction(async (trx) => {
    await trx.raw('SET LOCAL enable_seqscan = off');
    const avg = await trx.raw(`EXPLAIN SELECT avg(score) FROM csat_surveys WHERE tenant_id = ? AND submitted_at >= now() - interval '30 days' AND submitted_at < now()`, [tenant.id]);
    const rate = await trx.raw(`EXPLAIN SELECT count(*), count(submitted_at) FROM csat_surveys WHERE tenant_id = ? AND created_at >= now() - interval '30 days' AND created_at < now()`, [tenant.id]);
    return [avg.rows, rate.rows].map((rows: Array<Record<string, string>>) => rows.map((r) => Object.values(r)[0]).join('\n'));
  });
  t.match(plans[0], /csat_surveys_rated/, 'csat_average_score: the ratings index');
  t.match(plans[1], /csat_surveys_sent/, 'csat_response_rate: the sent index');
});
