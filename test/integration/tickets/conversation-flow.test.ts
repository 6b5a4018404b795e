import t, { type Test } from 'tap';
import { call, testApp, tenantFixture, userFixture, type TestEnv, type TenantFixture, type UserFixture } from '../../helpers/app.js';
import { PNG_1X1, multipart } from '../../helpers/conversation.js';

/**
 * A whole ticket's life through the API, in two tenants at once (issue 6, "done when"): the
 * customer opens it, the agent answers with a screenshot, resolves it, the customer's reply
 * reopens it, the agent closes it, and a closed ticket takes no more messages. Each tenant's
 * answers carry nothing of the other.
 */
async function life(t: Test, env: TestEnv, tenant: TenantFixture, agent: UserFixture, customer: UserFixture, tag: string) {
  const statuses = (await call(env, 'GET', '/meta/statuses', { token: agent.token })).json().data as Array<{ id: string; key: string }>;
  const status = (key: string) => statuses.find((s) => s.key === key)!.id;

  const opened = await call(env, 'POST', '/tickets', { token: customer.token, body: { subject: `Broken ${tag}`, body: `It is broken (${tag})`, requester_id: customer.id } });
  t.equal(opened.statusCode, 201, opened.body);
  const ticket = opened.json();

  const reply = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body: `Try this (${tag})` } });
  t.equal(reply.statusCode, 201);
  const form = multipart([{ filename: `howto-${tag}.png`, type: 'image/png', content: PNG_1X1 }]);
  const files = await call(env, 'POST', `/tickets/${ticket.id}/messages/${reply.json().id}/attachments`, { token: agent.token, body: form.payload, headers: form.headers });
  t.equal(files.statusCode, 201);
  t.equal((await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body: `note ${tag}`, is_private: true } })).statusCode, 201);
  t.ok((await call(env, 'GET', `/tickets/${ticket.id}`, { token: agent.token })).json().first_responded_at, 'first response recorded');

  t.equal((await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: agent.token, body: { status_id: status('resolved') } })).statusCode, 200);
  const again = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: customer.token, body: { body: `Still broken (${tag})` } });
  t.equal(again.statusCode, 201);
  t.equal((await call(env, 'GET', `/tickets/${ticket.id}`, { token: customer.token })).json().status_id, status('open'), 'the reply reopened it');

  const conversation = await call(env, 'GET', `/tickets/${ticket.id}/messages`, { token: customer.token });
  t.same(conversation.json().data.map((m: { body: string }) => m.body), [`It is broken (${tag})`, `Try this (${tag})`, `Still broken (${tag})`]);
  const fileId = conversation.json().data[1].attachments[0].id;
  const download = await call(env, 'GET', `/attachments/${fileId}`, { token: customer.token });
  t.equal(download.statusCode, 200);
  t.same(download.rawPayload, PNG_1X1);

  t.equal((await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: agent.token, body: { status_id: status('closed') } })).statusCode, 200);
  const late = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: customer.token, body: { body: 'one more thing' } });
  t.equal(late.statusCode, 409);

  const timeline = (await call(env, 'GET', `/tickets/${ticket.id}/events`, { token: agent.token })).json().data as Array<{ type: string; to: string | null }>;
  t.same(timeline.map((e) => e.type), ['created', 'message_created', 'message_created', 'status_changed', 'message_created', 'status_changed', 'status_changed']);
  t.same(timeline.filter((e) => e.type === 'status_changed').map((e) => e.to), ['Resolved', 'Open', 'Closed']);
  return { ticket, fileId, tag };
}

t.test('a ticket lives its whole life in two tenants at once, nothing crossing over', async (t) => {
  const env = await testApp(t);
  const tenants = await Promise.all(['one', 'two'].map(async (tag) => {
    const tenant = await tenantFixture(env);
    return { tag, tenant, agent: await userFixture(env, tenant.id, 'agent'), customer: await userFixture(env, tenant.id, 'customer') };
  }));
  const [a, b] = await Promise.all(tenants.map((x) => t.test(`tenant ${x.tag}`, (t) => life(t, env, x.tenant, x.agent, x.customer, x.tag)).then(() => x)));
  // Each tenant's staff asks for the other's ticket and file by id: not found, nothing of it shown.
  const rows = await env.deps.db('tickets').whereIn('tenant_id', [a!.tenant.id, b!.tenant.id]).select('tenant_id', 'id');
  for (const [me, them] of [[a!, b!], [b!, a!]] as const) {
    const theirs = rows.find((r) => r.tenant_id === them.tenant.id)!.id as string;
    for (const path of [`/tickets/${theirs}/messages`, `/tickets/${theirs}/events`]) {
      const res = await call(env, 'GET', path, { token: me.agent.token });
      t.equal(res.statusCode, 404, `${me.tag} → ${them.tag} ${path}`);
      t.notOk(res.body.includes(them.tag === 'one' ? '(one)' : '(two)'));
    }
  }
  t.same(env.guard.violations, [], 'every query named its tenant');
});
