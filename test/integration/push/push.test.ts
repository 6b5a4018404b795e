import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DateTime } from 'luxon';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { openTicket, vocab } from '../../helpers/tickets.js';
import { FakePushService, type FakeBrowser } from '../../helpers/push-service.js';
import { eventually } from '../../helpers/eventually.js';
import { runJob } from '../../../src/jobs/runner.js';
import { DAYS } from '../../../src/push/schemas.js';

/** Browser push (CONTRACT §14) against a local push service that verifies VAPID and decrypts. */
t.setTimeout(180_000);
// Push endpoints in tests are http://127.0.0.1: allowed only with the operator's switch.
const env = await testApp(t, { webhooksAllowPrivate: true });
const service = await new FakePushService().start();
t.teardown(() => service.close());

const subscribe = async (user: { token: string }, browser: FakeBrowser) => {
  const res = await call(env, 'POST', '/push/subscriptions', { token: user.token, body: { endpoint: browser.endpoint, keys: browser.keys, expirationTime: null } });
  if (res.statusCode !== 201) throw new Error(`subscribe: ${res.statusCode} ${res.body}`);
  return res.json() as { id: string; endpoint: string; created_at: string };
};
const queuedFor = async (subscriptionId: string) => Number((await env.deps.db('push_messages').where({ subscription_id: subscriptionId })
  .comment('cross-tenant: a test reads one subscription\'s queue').count({ n: '*' }))[0]!.n);

t.test('VAPID key: generated once into the data dir, staff only', async (t) => {
  const tenant = await tenantFixture(env);
  const customer = await userFixture(env, tenant.id, 'customer');
  const first = await call(env, 'GET', '/push/vapid-public-key', { token: tenant.admin.token });
  t.equal(first.statusCode, 200);
  const key = first.json().public_key as string;
  t.equal(Buffer.from(key, 'base64url').length, 65, 'raw uncompressed P-256 point');
  const file = join(env.config.dataDir, 'vapid.json');
  t.ok(existsSync(file));
  t.equal(JSON.parse(readFileSync(file, 'utf8')).publicKey, key);
  t.equal((await call(env, 'GET', '/push/vapid-public-key', { token: tenant.admin.token })).json().public_key, key, 'stable');
  t.equal((await call(env, 'GET', '/push/vapid-public-key', { token: customer.token })).statusCode, 403);
  t.equal((await call(env, 'GET', '/push/vapid-public-key')).statusCode, 401);
});

t.test('subscriptions: own only, validated, outbound rules', async (t) => {
  const tenant = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const other = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const browser = service.browser();
  const sub = await subscribe(agent, browser);
  t.equal(sub.endpoint, browser.endpoint);
  const again = await subscribe(agent, browser);
  t.equal(again.id, sub.id, 'the same browser subscribing again is one subscription');
  t.same((await call(env, 'GET', '/push/subscriptions', { token: agent.token })).json().data.map((s: { id: string }) => s.id), [sub.id]);
  t.same((await call(env, 'GET', '/push/subscriptions', { token: other.token })).json().data, [], 'nobody sees another user\'s browsers');
  t.equal((await call(env, 'DELETE', `/push/subscriptions/${sub.id}`, { token: other.token })).statusCode, 404);
  t.equal((await call(env, 'POST', '/push/subscriptions', { token: customer.token, body: { endpoint: browser.endpoint, keys: browser.keys } })).statusCode, 403);

  const bad = await call(env, 'POST', '/push/subscriptions', { token: agent.token, body: { endpoint: 'not a url', keys: { p256dh: 'AAAA', auth: 'AAAA' } } });
  t.equal(bad.statusCode, 422);
  t.same(bad.json().details.map((d: { field: string }) => d.field).sort(), ['endpoint', 'keys.auth', 'keys.p256dh']);
  t.equal((await call(env, 'POST', '/push/subscriptions', { token: agent.token, body: { endpoint: 'https://x.example', keys: browser.keys, extra: 1 } })).statusCode, 422);

  t.equal((await call(env, 'DELETE', `/push/subscriptions/${sub.id}`, { token: agent.token })).statusCode, 204);
  t.equal((await call(env, 'DELETE', `/push/subscriptions/${sub.id}`, { token: agent.token })).statusCode, 404);
});

t.test('without the private-target switch, loopback and private endpoints are refused', async (t) => {
  const strict = await testApp(t);
  const tenant = await tenantFixture(strict);
  const browser = service.browser();
  for (const endpoint of [browser.endpoint, 'https://127.0.0.1/push/x', 'https://10.1.2.3/x', 'https://[::1]/x', 'https://169.254.169.254/latest', 'http://push.example.com/x']) {
    const res = await call(strict, 'POST', '/push/subscriptions', { token: tenant.admin.token, body: { endpoint, keys: browser.keys } });
    t.equal(res.statusCode, 422, endpoint);
    t.equal(res.json().details?.[0]?.field, 'endpoint');
  }
});

t.test('a new ticket pushes to its team\'s agents, encrypted and VAPID-signed', async (t) => {
  const tenant = await tenantFixture(env);
  const inTeam = await userFixture(env, tenant.id, 'agent');
  const outside = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const team = (await call(env, 'POST', '/teams', { token: tenant.admin.token, body: { name: 'Hardware' } })).json();
  await call(env, 'POST', `/teams/${team.id}/members`, { token: tenant.admin.token, body: { user_id: inTeam.id } });
  await call(env, 'POST', `/teams/${team.id}/members`, { token: tenant.admin.token, body: { user_id: tenant.admin.id } });
  const bInTeam = service.browser();
  const bOutside = service.browser();
  const bAdmin = service.browser();
  await subscribe(inTeam, bInTeam);
  const sOutside = await subscribe(outside, bOutside);
  const sAdmin = await subscribe(tenant.admin, bAdmin);
  const key = (await call(env, 'GET', '/push/vapid-public-key', { token: tenant.admin.token })).json().public_key;

  const ticket = await openTicket(env, tenant.admin.token, { requester_id: customer.id, subject: 'Printer on fire', team_id: team.id });
  t.ok(await eventually(() => service.for(bInTeam).length === 1), 'the team\'s agent got one push');
  const [push] = service.for(bInTeam);
  t.same(push!.payload, { type: 'ticket.created', ticket_id: ticket.id, ticket_number: ticket.ticket_number, subject: 'Printer on fire', url: `${env.config.siteUrl}/tickets/${ticket.id}` });
  t.equal(push!.vapid.key, key, 'signed with the instance key');
  t.equal(push!.headers.ttl, '86400');
  t.equal(push!.headers.urgency, 'normal');
  t.equal(await queuedFor(sOutside.id), 0, 'an agent outside the team gets none');
  t.equal(await queuedFor(sAdmin.id), 0, 'the one who opened it gets none');
  t.same(service.rejected, [], 'the push service accepted every request');
  // The sender records the outcome after the push service answered: wait for it, not for the push.
  const sentRow = () => env.deps.db('push_messages').where({ tenant_id: tenant.id }).first().then((row) => row?.status === 'sent');
  t.ok(await eventually(sentRow), 'the push is recorded as sent');

  // No team: every staff user.
  const cust2 = await call(env, 'POST', '/tickets', { token: customer.token, body: { subject: 'No team', body: 'x' } });
  t.equal(cust2.statusCode, 201);
  t.ok(await eventually(() => service.for(bOutside).length === 1 && service.for(bAdmin).length === 1 && service.for(bInTeam).length === 2), 'all staff for a ticket without a team');
  t.same(env.guard.violations, []);
});

t.test('a tenant\'s first subscription gets its next ticket\'s push; once the last is removed, none is queued', async (t) => {
  // A tenant without subscriptions answers "nobody to push to" from its cached configuration; a
  // subscription, and its removal, must reach the next ticket all the same.
  const tenant = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const queued = async () => Number((await env.deps.db('push_messages').where({ tenant_id: tenant.id }).count({ n: '*' }))[0]!.n);
  const open = async (subject: string) => {
    const res = await call(env, 'POST', '/tickets', { token: customer.token, body: { subject, body: 'x' } });
    t.equal(res.statusCode, 201, subject);
  };
  await open('Before anyone subscribed');
  await open('Still nobody');
  t.equal(await queued(), 0, 'no subscription, no push');

  const browser = service.browser();
  const subscription = await subscribe(agent, browser);
  await open('After the first subscription');
  t.ok(await eventually(() => service.for(browser).length === 1), 'the new subscriber got the next ticket\'s push');
  t.equal(await queued(), 1);

  const removed = await call(env, 'DELETE', `/push/subscriptions/${subscription.id}`, { token: agent.token });
  t.equal(removed.statusCode, 204);
  await open('After the last subscription went');
  t.equal(await queued(), 0, 'nothing queued once the last subscription is gone (its messages went with it)');
  t.equal(service.for(browser).length, 1, 'and nothing more sent');
  t.same(env.guard.violations, []);
});

t.test('an urgent ticket assigned to someone else pushes to the assignee with Urgency: high', async (t) => {
  const tenant = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const v = await vocab(env, tenant.admin.token);
  const browser = service.browser();
  const sub = await subscribe(agent, browser);
  const team = (await call(env, 'POST', '/teams', { token: tenant.admin.token, body: { name: 'Empty' } })).json();
  const normal = await openTicket(env, tenant.admin.token, { requester_id: customer.id, team_id: team.id });
  await call(env, 'PATCH', `/tickets/${normal.id}`, { token: tenant.admin.token, body: { assigned_agent_id: agent.id } });
  t.equal(await queuedFor(sub.id), 0, 'a normal ticket\'s assignment pushes nothing');

  const urgent = await openTicket(env, tenant.admin.token, { requester_id: customer.id, team_id: team.id, priority_id: v.priority.urgent, subject: 'Down!' });
  const selfAssigned = await call(env, 'PATCH', `/tickets/${urgent.id}`, { token: agent.token, body: { assigned_agent_id: agent.id } });
  t.equal(selfAssigned.statusCode, 200);
  t.equal(await queuedFor(sub.id), 0, 'taking it yourself pushes nothing');
  await call(env, 'PATCH', `/tickets/${urgent.id}`, { token: agent.token, body: { assigned_agent_id: null } });
  await call(env, 'PATCH', `/tickets/${urgent.id}`, { token: tenant.admin.token, body: { assigned_agent_id: agent.id } });
  t.ok(await eventually(() => service.for(browser).length === 1));
  const [push] = service.for(browser);
  t.same(push!.payload, { type: 'ticket.urgent_assigned', ticket_id: urgent.id, ticket_number: urgent.ticket_number, subject: 'Down!', url: `${env.config.siteUrl}/tickets/${urgent.id}` });
  t.equal(push!.headers.urgency, 'high');
  t.equal(push!.headers.ttl, '3600');
});

t.test('preferences: push off and quiet hours drop the push; validation names the field', async (t) => {
  const tenant = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const sub = await subscribe(agent, service.browser());

  const me = (await call(env, 'GET', '/auth/me', { token: agent.token })).json();
  t.same(me.notification_preferences, { email: true, push: true, active_window: null }, 'defaults');
  for (const [body, field] of [
    [{ active_window: { start: '25:00', end: '17:00', days: ['mon'] } }, 'notification_preferences.active_window.start'],
    [{ active_window: { start: '09:00', end: '17:00', days: ['someday'] } }, 'notification_preferences.active_window.days.0'],
    [{ active_window: { start: '09:00', end: '17:00', days: [] } }, 'notification_preferences.active_window.days'],
    [{ push: 'no' }, 'notification_preferences.push'],
  ] as const) {
    const res = await call(env, 'PATCH', '/auth/me', { token: agent.token, body: { notification_preferences: body } });
    t.equal(res.statusCode, 422, JSON.stringify(body));
    t.ok(res.json().details.some((d: { field: string }) => d.field === field), `names ${field}: ${JSON.stringify(res.json().details)}`);
  }

  // A window on every day but today (in the agent's zone): now is outside it.
  const zone = 'Asia/Tokyo';
  const today = DAYS[DateTime.now().setZone(zone).weekday - 1]!;
  const days = DAYS.filter((d) => d !== today);
  const set = await call(env, 'PATCH', '/auth/me', { token: agent.token, body: { timezone: zone, notification_preferences: { active_window: { start: '00:00', end: '00:00', days } } } });
  t.equal(set.statusCode, 200, set.body);
  t.same(set.json().notification_preferences, { email: true, push: true, active_window: { start: '00:00', end: '00:00', days } });
  await openTicket(env, tenant.admin.token, { requester_id: customer.id });
  t.equal(await queuedFor(sub.id), 0, 'outside the window: dropped');

  await call(env, 'PATCH', '/auth/me', { token: agent.token, body: { notification_preferences: { active_window: null, push: false } } });
  await openTicket(env, tenant.admin.token, { requester_id: customer.id });
  t.equal(await queuedFor(sub.id), 0, 'push off: dropped');

  const on = await call(env, 'PATCH', '/auth/me', { token: agent.token, body: { notification_preferences: { push: true, active_window: { start: '00:00', end: '00:00', days: [today, today] } } } });
  t.same(on.json().notification_preferences.active_window.days, [today], 'each day once');
  await openTicket(env, tenant.admin.token, { requester_id: customer.id });
  t.equal(await queuedFor(sub.id), 1, 'inside the window: sent');
  const audit = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'user.updated', resource_id: agent.id });
  t.ok(audit.some((a) => a.changes.notification_preferences), 'the change is audited');
});

t.test('404/410 remove the subscription; other failures retry, then the job sends', async (t) => {
  const tenant = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const gone = service.browser();
  const flaky = service.browser();
  const sGone = await subscribe(agent, gone);
  const sFlaky = await subscribe(agent, flaky);
  service.answers.set(new URL(gone.endpoint).pathname, 410);
  service.answers.set(new URL(flaky.endpoint).pathname, 503);

  await openTicket(env, tenant.admin.token, { requester_id: customer.id });
  t.ok(await eventually(async () => !(await env.deps.db('push_subscriptions').where({ tenant_id: tenant.id, id: sGone.id }).first())), '410: subscription deleted');
  t.ok(await eventually(async () => (await env.deps.db('push_messages').where({ subscription_id: sFlaky.id }).first())?.attempts === 1), '503: one attempt');
  const pending = await env.deps.db('push_messages').where({ subscription_id: sFlaky.id }).first();
  t.equal(pending.status, 'pending');
  t.match(pending.last_error, /503/);
  t.ok(new Date(pending.next_attempt_at).getTime() > Date.now() + 30_000, 'next attempt about a minute later');

  service.answers.delete(new URL(flaky.endpoint).pathname);
  const run = await runJob(env.deps, 'push-send', { now: new Date(Date.now() + 2 * 60_000) });
  t.match(run, { status: 'succeeded' });
  t.equal(service.for(flaky).length, 1, 'the job delivered it');
  t.equal((await env.deps.db('push_messages').where({ subscription_id: sFlaky.id }).first()).status, 'sent');

  const later = await runJob(env.deps, 'push-send', { now: new Date(Date.now() + 8 * 24 * 3600_000) });
  t.ok((later.result as { purged: number }).purged >= 1, 'a week later the job purges sent pushes');
  t.equal(await queuedFor(sFlaky.id), 0);
});
