import t from 'tap';
import { apiKeyFixture, call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { ticketFixture } from '../../helpers/ticket-fixture.js';
import { count } from '../../helpers/tickets.js';

const nameOf = async (env: TestEnv, tenantId: string, id: string) => (await env.deps.db('users').where({ tenant_id: tenantId, id }).first()).name as string;

t.test('reply lock', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const ann = await userFixture(env, tenant.id, 'agent');
  const bob = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const otherCustomer = await userFixture(env, other.id, 'customer');
  const ticket = await ticketFixture(env, tenant.id, customer.id);
  const foreign = await ticketFixture(env, other.id, otherCustomer.id);
  const annName = await nameOf(env, tenant.id, ann.id);
  const lock = (token: string, id = ticket.id) => call(env, 'POST', `/tickets/${id}/reply-lock`, { token });
  const unlock = (token: string, id = ticket.id) => call(env, 'DELETE', `/tickets/${id}/reply-lock`, { token });
  /** Moves the lock's expiry, standing in for the passing of time (requests take the wall clock). */
  const expireIn = (seconds: number) =>
    env.deps.db('reply_locks').where({ tenant_id: tenant.id, ticket_id: ticket.id }).update({ expires_at: new Date(Date.now() + seconds * 1000) });

  await t.test('acquire for 120 s; the holder re-POSTs to extend', async (t) => {
    const before = Date.now();
    const res = await lock(ann.token);
    t.equal(res.statusCode, 200, res.body);
    const body = res.json();
    t.same(Object.keys(body).sort(), ['expires_at', 'locked_by', 'ticket_id']);
    t.same(body.locked_by, { id: ann.id, name: annName });
    const expires = Date.parse(body.expires_at);
    t.ok(expires >= before + 120_000 && expires <= Date.now() + 120_000, 'expires 120 s after the request');
    await expireIn(5);
    const extended = await lock(ann.token);
    t.equal(extended.statusCode, 200);
    t.ok(Date.parse(extended.json().expires_at) > Date.now() + 100_000, 'extended to a fresh 120 s');
  });

  await t.test('another agent gets 409 reply_locked naming the holder; cannot release it', async (t) => {
    const res = await lock(bob.token);
    t.equal(res.statusCode, 409);
    const body = res.json();
    t.equal(body.code, 'reply_locked');
    t.same(body.details.locked_by, { id: ann.id, name: annName });
    t.match(body.details.expires_at, /Z$/);
    const release = await unlock(bob.token);
    t.equal(release.statusCode, 409);
    t.equal(release.json().code, 'reply_locked');
    const row = await env.deps.db('reply_locks').where({ tenant_id: tenant.id, ticket_id: ticket.id }).first();
    t.equal(row.user_id, ann.id, 'still Ann’s');
  });

  await t.test('an expired lock is free', async (t) => {
    await expireIn(-1);
    const res = await lock(bob.token);
    t.equal(res.statusCode, 200);
    t.equal(res.json().locked_by.id, bob.id);
    t.equal((await lock(ann.token)).statusCode, 409, 'now Bob holds it');
  });

  await t.test('DELETE by the holder or an admin; releasing a free lock is fine', async (t) => {
    t.equal((await unlock(bob.token)).statusCode, 204);
    t.equal(await count(env, 'reply_locks', tenant.id), 0);
    t.equal((await unlock(bob.token)).statusCode, 204, 'nothing to release');
    t.equal((await lock(ann.token)).statusCode, 200);
    t.equal((await unlock(tenant.admin.token)).statusCode, 204, 'an admin breaks the lock');
    t.equal((await lock(bob.token)).statusCode, 200, 'free again');
  });

  await t.test('customers, other tenants, unknown tickets', async (t) => {
    t.equal((await lock(customer.token)).statusCode, 403);
    t.equal((await unlock(customer.token)).statusCode, 403);
    t.equal((await lock(ann.token, foreign.id)).statusCode, 404);
    t.equal((await unlock(ann.token, foreign.id)).statusCode, 404);
    t.equal((await lock(ann.token, '0190a1b2-0000-7000-8000-0000000000ff')).statusCode, 404);
    t.equal((await lock(ann.token, 'not-a-uuid')).statusCode, 404);
    t.equal(await count(env, 'reply_locks', other.id), 0);
  });

  await t.test('concurrent acquirers: exactly one wins', async (t) => {
    const fresh = await ticketFixture(env, tenant.id, customer.id);
    const answers = await Promise.all([lock(ann.token, fresh.id), lock(bob.token, fresh.id)]);
    t.same(answers.map((r) => r.statusCode).sort(), [200, 409]);
  });

  t.same(env.guard.violations, []);
});

t.test('time entries', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const ann = await userFixture(env, tenant.id, 'agent');
  const bob = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const otherCustomer = await userFixture(env, other.id, 'customer');
  const otherAgent = await userFixture(env, other.id, 'agent');
  const ticket = await ticketFixture(env, tenant.id, customer.id);
  const foreign = await ticketFixture(env, other.id, otherCustomer.id);
  const annName = await nameOf(env, tenant.id, ann.id);
  const today = new Date().toISOString().slice(0, 10);
  let annEntry = '';

  await t.test('an agent logs time; defaults: billable, today', async (t) => {
    const res = await call(env, 'POST', `/tickets/${ticket.id}/time-entries`, { token: ann.token, body: { minutes: 25, description: ' Reproduced the fault ' } });
    t.equal(res.statusCode, 201, res.body);
    const entry = res.json();
    annEntry = entry.id;
    t.same(Object.keys(entry).sort(), ['billable', 'created_at', 'description', 'id', 'minutes', 'ticket_id', 'updated_at', 'user_id', 'user_name', 'work_date']);
    t.match(entry, { ticket_id: ticket.id, user_id: ann.id, user_name: annName, minutes: 25, description: 'Reproduced the fault', billable: true, work_date: today });
    const dated = await call(env, 'POST', `/tickets/${ticket.id}/time-entries`, { token: bob.token, body: { minutes: 90, billable: false, work_date: '2026-01-31' } });
    t.equal(dated.statusCode, 201);
    t.match(dated.json(), { user_id: bob.id, billable: false, work_date: '2026-01-31', description: null });
    const list = await call(env, 'GET', `/tickets/${ticket.id}/time-entries`, { token: ann.token });
    t.equal(list.statusCode, 200);
    t.match(list.json(), { data: [{ id: annEntry, minutes: 25 }, { user_id: bob.id, minutes: 90 }], meta: { total: 2, page: 1 } });
  });

  await t.test('bad input names each problem and writes nothing', async (t) => {
    const before = await count(env, 'time_entries', tenant.id);
    const res = await call(env, 'POST', `/tickets/${ticket.id}/time-entries`, {
      token: ann.token, body: { minutes: 0, description: 'x'.repeat(2001), billable: 'yes', work_date: '31.01.2026', hours: 1 },
    });
    t.equal(res.statusCode, 422);
    t.same(res.json().details.map((d: { field: string }) => d.field).sort(), ['billable', 'description', 'hours', 'minutes', 'work_date']);
    t.equal((await call(env, 'POST', `/tickets/${ticket.id}/time-entries`, { token: ann.token, body: {} })).json().details[0].field, 'minutes');
    t.equal((await call(env, 'POST', `/tickets/${ticket.id}/time-entries`, { token: ann.token, body: { minutes: 1441 } })).statusCode, 422);
    t.equal((await call(env, 'POST', `/tickets/${ticket.id}/time-entries`, { token: ann.token, body: { minutes: 2.5 } })).statusCode, 422);
    const future = await call(env, 'POST', `/tickets/${ticket.id}/time-entries`, { token: ann.token, body: { minutes: 5, work_date: '2999-01-01' } });
    t.same(future.json().details, [{ field: 'work_date', message: 'must not be in the future' }]);
    const impossible = await call(env, 'POST', `/tickets/${ticket.id}/time-entries`, { token: ann.token, body: { minutes: 5, work_date: '2026-02-30' } });
    t.equal(impossible.statusCode, 422);
    t.equal(impossible.json().details[0].field, 'work_date');
    t.equal(await count(env, 'time_entries', tenant.id), before);
  });

  await t.test('agents change and delete their own entries; admins any', async (t) => {
    const mine = await call(env, 'PATCH', `/time-entries/${annEntry}`, { token: ann.token, body: { minutes: 30, description: null, billable: false } });
    t.equal(mine.statusCode, 200, mine.body);
    t.match(mine.json(), { minutes: 30, description: null, billable: false, work_date: today });
    t.ok(Date.parse(mine.json().updated_at) >= Date.parse(mine.json().created_at));
    const notMine = await call(env, 'PATCH', `/time-entries/${annEntry}`, { token: bob.token, body: { minutes: 1 } });
    t.equal(notMine.statusCode, 403);
    t.equal(notMine.json().code, 'forbidden');
    t.equal((await call(env, 'DELETE', `/time-entries/${annEntry}`, { token: bob.token })).statusCode, 403);
    const byAdmin = await call(env, 'PATCH', `/time-entries/${annEntry}`, { token: tenant.admin.token, body: { work_date: '2026-01-01' } });
    t.equal(byAdmin.statusCode, 200);
    t.match(byAdmin.json(), { user_id: ann.id, minutes: 30, work_date: '2026-01-01' }, 'the entry stays Ann’s');
    const badPatch = await call(env, 'PATCH', `/time-entries/${annEntry}`, { token: ann.token, body: { minutes: -3, work_date: '2999-12-31' } });
    t.equal(badPatch.statusCode, 422);
    const future = await call(env, 'PATCH', `/time-entries/${annEntry}`, { token: ann.token, body: { work_date: '2999-12-31' } });
    t.same(future.json().details, [{ field: 'work_date', message: 'must not be in the future' }]);
    t.equal((await env.deps.db('time_entries').where({ tenant_id: tenant.id, id: annEntry }).first()).minutes, 30, 'unchanged by refusals');
    t.equal((await call(env, 'DELETE', `/time-entries/${annEntry}`, { token: ann.token })).statusCode, 204);
    t.equal((await call(env, 'DELETE', `/time-entries/${annEntry}`, { token: ann.token })).statusCode, 404, 'gone');
  });

  await t.test('customers, scopes, other tenants', async (t) => {
    t.equal((await call(env, 'GET', `/tickets/${ticket.id}/time-entries`, { token: customer.token })).statusCode, 403);
    t.equal((await call(env, 'POST', `/tickets/${ticket.id}/time-entries`, { token: customer.token, body: { minutes: 5 } })).statusCode, 403);
    const readOnly = await apiKeyFixture(env, tenant.id, ann.id, ['time_entries:read']);
    t.equal((await call(env, 'GET', `/tickets/${ticket.id}/time-entries`, { token: readOnly.key })).statusCode, 200);
    const denied = await call(env, 'POST', `/tickets/${ticket.id}/time-entries`, { token: readOnly.key, body: { minutes: 5 } });
    t.equal(denied.statusCode, 403);
    t.same(denied.json().details, { required_scope: 'time_entries:write' });
    const writer = await apiKeyFixture(env, tenant.id, bob.id, ['time_entries:write']);
    const bobs = (await call(env, 'GET', `/tickets/${ticket.id}/time-entries`, { token: ann.token })).json().data[0].id;
    const noDelete = await call(env, 'DELETE', `/time-entries/${bobs}`, { token: writer.key });
    t.same(noDelete.json().details, { required_scope: 'time_entries:delete' });

    t.equal((await call(env, 'GET', `/tickets/${foreign.id}/time-entries`, { token: ann.token })).statusCode, 404);
    t.equal((await call(env, 'POST', `/tickets/${foreign.id}/time-entries`, { token: ann.token, body: { minutes: 5 } })).statusCode, 404);
    const theirs = await call(env, 'POST', `/tickets/${foreign.id}/time-entries`, { token: otherAgent.token, body: { minutes: 5 } });
    t.equal(theirs.statusCode, 201);
    t.equal((await call(env, 'PATCH', `/time-entries/${theirs.json().id}`, { token: tenant.admin.token, body: { minutes: 6 } })).statusCode, 404);
    t.equal((await call(env, 'DELETE', `/time-entries/${theirs.json().id}`, { token: tenant.admin.token })).statusCode, 404);
    t.equal((await env.deps.db('time_entries').where({ tenant_id: other.id, id: theirs.json().id }).first()).minutes, 5);
  });

  t.same(env.guard.violations, []);
});
