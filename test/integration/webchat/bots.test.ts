import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { SYSTEM_ACTOR } from '../../../src/core/context.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { botTurn } from '../../../src/bots/run.js';
import { chatSweep } from '../../../src/webchat/sweep.js';

/**
 * Bot flows: CRUD with whole-graph validation, duplicate, the channel-agnostic interpreter
 * (message, question, collect, handoff, end), sessions with transcripts, abandonment by the job.
 */
t.setTimeout(180_000);

const flow = {
  name: 'Front door', active: true, start_node: 'hello',
  nodes: [
    { id: 'hello', type: 'message', text: 'Hi! I am the help bot.', next: 'topic' },
    { id: 'topic', type: 'question', text: 'What do you need?', choices: [
      { label: 'Billing', target_node: 'email' }, { label: 'Talk to a person', target_node: 'human' }, { label: 'Nothing', target_node: 'bye' }] },
    { id: 'email', type: 'collect', text: 'Your email, please?', field: 'email', next: 'human' },
    { id: 'human', type: 'handoff', text: 'Passing you to a colleague.' },
    { id: 'bye', type: 'end', text: 'Goodbye!' },
  ],
};

t.test('CRUD, validation naming each problem, duplicate, scopes', async (t) => {
  const env = await testApp(t);
  const a = await tenantFixture(env);
  const token = a.admin.token;

  const created = await call(env, 'POST', '/bot-flows', { token, body: flow });
  t.equal(created.statusCode, 201, created.body);
  const body = created.json();
  t.match(body, { name: 'Front door', active: true, start_node: 'hello' });
  t.equal(body.nodes.length, 5);

  const bad = await call(env, 'POST', '/bot-flows', { token, body: {
    name: 'Broken', start_node: 'nowhere',
    nodes: [
      { id: 'a', type: 'message', text: 'x', next: 'missing' },
      { id: 'q', type: 'question', text: 'pick', choices: [{ label: 'one', target_node: 'ghost' }] },
      { id: 'c', type: 'collect', text: 'name?', next: 'a' },
      { id: 'a', type: 'end', text: 'dup' },
    ],
  } });
  t.equal(bad.statusCode, 422);
  const fields = bad.json().details.map((d: { field: string }) => d.field).sort();
  t.same(fields, ['nodes.0.next', 'nodes.1.choices.0.target_node', 'nodes.2.field', 'nodes.3.id', 'start_node'].sort());

  const loop = await call(env, 'POST', '/bot-flows', { token, body: {
    name: 'Loop', start_node: 'a', nodes: [{ id: 'a', type: 'message', text: 'a', next: 'b' }, { id: 'b', type: 'message', text: 'b', next: 'a' }],
  } });
  t.equal(loop.statusCode, 422, 'a loop of message nodes never waits: refused');

  const patched = await call(env, 'PATCH', `/bot-flows/${body.id}`, { token, body: { start_node: 'ghost' } });
  t.equal(patched.statusCode, 422);
  const renamed = await call(env, 'PATCH', `/bot-flows/${body.id}`, { token, body: { name: 'Front door v2' } });
  t.equal(renamed.json().name, 'Front door v2');

  const copy = await call(env, 'POST', `/bot-flows/${body.id}/duplicate`, { token });
  t.equal(copy.statusCode, 201);
  t.match(copy.json(), { name: 'Front door v2 (copy)', active: false, start_node: 'hello' });
  t.not(copy.json().id, body.id);
  t.same(copy.json().nodes, renamed.json().nodes);

  const list = await call(env, 'GET', '/bot-flows', { token });
  t.equal(list.json().meta.total, 2);

  const agent = await userFixture(env, a.id, 'agent');
  t.equal((await call(env, 'GET', '/bot-flows', { token: agent.token })).statusCode, 200, 'agents read flows');
  t.equal((await call(env, 'POST', '/bot-flows', { token: agent.token, body: flow })).statusCode, 403, 'agents do not write them');

  const b = await tenantFixture(env);
  t.equal((await call(env, 'GET', `/bot-flows/${body.id}`, { token: b.admin.token })).statusCode, 404, 'another tenant sees nothing');
  t.equal((await call(env, 'DELETE', `/bot-flows/${body.id}`, { token: b.admin.token })).statusCode, 404);
  t.equal((await call(env, 'DELETE', `/bot-flows/${copy.json().id}`, { token })).statusCode, 204);
  t.equal((await call(env, 'GET', `/bot-flows/${copy.json().id}`, { token })).statusCode, 404);
  t.same(env.guard.violations, []);
});

t.test('the interpreter: message, question (label, number, else repeat), collect with validation, handoff, end', async (t) => {
  const env = await testApp(t);
  const a = await tenantFixture(env);
  const id = (await call(env, 'POST', '/bot-flows', { token: a.admin.token, body: flow })).json().id;
  const turn = (key: string, text: string | null) => inTransaction(env.deps, { tenantId: a.id, actor: SYSTEM_ACTOR, now: new Date() }, (ctx) =>
    botTurn(ctx, { flowId: id, channel: 'messaging_a', conversationKey: key, text }));

  const first = await turn('c1', 'hello there');
  t.equal(first.outcome, 'active');
  t.same(first.replies.map((r) => r.node_id), ['hello', 'topic']);
  t.same(first.replies[1]!.choices, ['Billing', 'Talk to a person', 'Nothing']);
  t.match(first.replies[1]!.text, /1\. Billing\n2\. Talk to a person/);
  t.equal(first.session.channel, 'messaging_a');

  const again = await turn('c1', 'something else');
  t.same(again.replies.map((r) => r.node_id), ['topic'], 'anything else repeats the question');
  const billing = await turn('c1', '  BILLING ');
  t.same(billing.replies.map((r) => r.node_id), ['email'], 'labels match case-insensitively');
  const notEmail = await turn('c1', 'not an address');
  t.match(notEmail.replies[0]!.text, /does not look like an email/);
  const handed = await turn('c1', 'Ada@Example.com');
  t.equal(handed.outcome, 'handed_off');
  t.same(handed.fields, { email: 'ada@example.com' });
  t.same(handed.replies.map((r) => r.text), ['Passing you to a colleague.']);
  t.equal(handed.session.status, 'handed_off');
  t.ok(handed.session.ended_at);

  await turn('c2', null);
  const ended = await turn('c2', '3');
  t.equal(ended.outcome, 'completed', 'a 1-based number picks the choice');
  t.same(ended.replies.map((r) => r.text), ['Goodbye!']);

  const detail = await call(env, 'GET', `/bot-flow-sessions/${handed.session.id}`, { token: a.admin.token });
  t.equal(detail.statusCode, 200);
  t.same(detail.json().transcript.map((e: { from: string }) => e.from),
    ['visitor', 'bot', 'bot', 'visitor', 'bot', 'visitor', 'bot', 'visitor', 'bot', 'visitor', 'bot']);
  const sessions = await call(env, 'GET', '/bot-flow-sessions', { token: a.admin.token, query: { status: 'completed' } });
  t.equal(sessions.json().meta.total, 1);

  // A deactivated flow hands an active session off at its next turn.
  await turn('c3', null);
  await call(env, 'PATCH', `/bot-flows/${id}`, { token: a.admin.token, body: { active: false } });
  t.equal((await turn('c3', '1')).outcome, 'handed_off');
});

t.test('abandonment: the chat-sweep job abandons sessions idle for 30 minutes, and only those', async (t) => {
  const env = await testApp(t);
  const a = await tenantFixture(env);
  const id = (await call(env, 'POST', '/bot-flows', { token: a.admin.token, body: flow })).json().id;
  const start = new Date('2026-11-27T10:00:00.000Z');
  const at = (now: Date, key: string) => inTransaction(env.deps, { tenantId: a.id, actor: SYSTEM_ACTOR, now }, (ctx) =>
    botTurn(ctx, { flowId: id, channel: 'webchat_test', conversationKey: key, text: null }));
  const idle = await at(start, 'idle');
  const busy = await at(new Date(start.getTime() + 20 * 60_000), 'busy');

  const early = await chatSweep(env.deps, new Date(start.getTime() + 29 * 60_000));
  t.equal(early.abandoned, 0);
  const late = await chatSweep(env.deps, new Date(start.getTime() + 31 * 60_000));
  t.equal(late.abandoned, 1);
  const rows = await env.deps.db('bot_sessions').where('tenant_id', a.id).select('id', 'status');
  t.equal(rows.find((r) => r.id === idle.session.id)!.status, 'abandoned');
  t.equal(rows.find((r) => r.id === busy.session.id)!.status, 'active');
  t.equal((await chatSweep(env.deps, new Date(start.getTime() + 31 * 60_000))).abandoned, 0, 'idempotent');
});
