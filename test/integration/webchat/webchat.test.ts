import t from 'tap';
import type { Test } from 'tap';
import { call, secondApp, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { baseUrlOf, openSse } from '../../helpers/sse.js';
import type { Config } from '../../../src/core/config.js';
import type { Clock } from '../../../src/core/clock.js';
import { chatSweep } from '../../../src/webchat/sweep.js';
import { VISITOR_MESSAGES_PER_MINUTE } from '../../../src/webchat/visitors.js';

/**
 * Live chat end to end through the API: widgets and origins, visitor tokens, the bot handing off,
 * the conversation's ticket, offering under capacity, claiming (the reply lock, also when two
 * agents claim at once), replies both ways, ending, blocks, rate limits, and the console stream
 * shared live by two daemons on one database, resumed with Last-Event-ID.
 */
t.setTimeout(240_000);

const LONG: Partial<Config> = { streamMaxMs: 60_000, streamHeartbeatMs: 60_000 };
const ORIGIN = 'https://shop.example.com';

const flow = {
  name: 'Front door', active: true, start_node: 'topic',
  nodes: [
    { id: 'topic', type: 'question', text: 'What do you need?', choices: [
      { label: 'Talk to a person', target_node: 'name' }, { label: 'Nothing', target_node: 'bye' }] },
    { id: 'name', type: 'collect', text: 'Your name?', field: 'name', next: 'human' },
    { id: 'human', type: 'handoff', text: 'Passing you to a colleague.' },
    { id: 'bye', type: 'end', text: 'Goodbye!' },
  ],
};

async function setup(t: Test, options: { bot?: boolean; clock?: Clock } = {}) {
  const env = await testApp(t, LONG, options.clock ? { clock: options.clock } : {});
  const a = await tenantFixture(env);
  let botFlowId: string | undefined;
  if (options.bot) botFlowId = (await call(env, 'POST', '/bot-flows', { token: a.admin.token, body: flow })).json().id;
  const widget = await call(env, 'POST', '/webchat/widgets', { token: a.admin.token, body: {
    name: 'Shop', allowed_origins: [ORIGIN, 'http://127.0.0.1:9'], greeting: 'Welcome!', offline_message: 'Nobody is here right now.',
    ...(botFlowId ? { bot_flow_id: botFlowId } : {}),
  } });
  t.equal(widget.statusCode, 201, widget.body);
  return { env, a, widget: widget.json() };
}

function start(env: TestEnv, widgetId: string, body: Record<string, unknown> = {}, origin = ORIGIN) {
  return call(env, 'POST', `/webchat/widgets/${widgetId}/conversations`, { body, headers: { origin } });
}

const asVisitor = (token: string) => ({ authorization: `Bearer ${token}`, origin: ORIGIN });

t.test('widget, origin check, bot hands off, ticket of channel webchat, claim, replies both ways, end', async (t) => {
  const { env, a, widget } = await setup(t, { bot: true });
  t.match(widget.embed_snippet, new RegExp(`<script src="http://[^"]+/webchat/widget\\.js" data-widget-id="${widget.id}" async></script>`));
  t.same(widget.allowed_origins, [ORIGIN, 'http://127.0.0.1:9']);
  t.equal((await call(env, 'GET', `/webchat/widgets/${widget.id}`, { token: a.admin.token })).statusCode, 200);

  const refused = await start(env, widget.id, { message: 'hi' }, 'https://evil.example.net');
  t.equal(refused.statusCode, 403, 'a disallowed origin cannot start a conversation');
  t.equal((await call(env, 'POST', `/webchat/widgets/${widget.id}/conversations`, { body: {} })).statusCode, 403, 'nor can a call without Origin');
  t.equal(await env.deps.db('webchat_visitors').where('tenant_id', a.id).count({ n: '*' }).first().then((r) => Number(r!.n)), 0, 'and nothing was stored');

  const agent = await userFixture(env, a.id, 'agent');
  await call(env, 'POST', '/webchat/presence', { token: agent.token, body: { status: 'online' } });

  const started = await start(env, widget.id, { message: 'hello' });
  t.equal(started.statusCode, 201, started.body);
  const { conversation_id: conversationId, visitor_token: visitorToken, visitor_id: visitorId } = started.json();
  t.match(visitorToken, /^hdv_[A-Za-z0-9_-]{40,}$/);
  const stored = await env.deps.db('webchat_visitors').where({ tenant_id: a.id, id: visitorId }).first();
  t.not(stored.token_hash, visitorToken, 'the token is stored only as a hash');
  t.equal(stored.token_hash.length, 64);

  let conversation = (await call(env, 'GET', `/webchat/conversations/${conversationId}`, { token: agent.token })).json();
  t.equal(conversation.status, 'bot');
  t.equal(conversation.ticket_id, null, 'no ticket while the bot talks');

  const lines = async () => (await call(env, 'GET', '/webchat/visitor/messages', { headers: asVisitor(visitorToken) })).json().data;
  t.same((await lines()).map((m: { from: string; text: string }) => [m.from, m.text.split('\n')[0]]),
    [['bot', 'Welcome!'], ['visitor', 'hello'], ['bot', 'What do you need?']]);

  t.equal((await call(env, 'POST', '/webchat/visitor/messages', { headers: asVisitor(visitorToken), body: { message: '1' } })).statusCode, 201);
  const named = await call(env, 'POST', '/webchat/visitor/messages', { headers: asVisitor(visitorToken), body: { message: 'Ada Lovelace' } });
  t.equal(named.statusCode, 201);

  conversation = (await call(env, 'GET', `/webchat/conversations/${conversationId}`, { token: agent.token })).json();
  t.equal(conversation.status, 'waiting', 'the bot handed off');
  t.equal(conversation.visitor.name, 'Ada Lovelace', 'the collected name is the visitor\'s');
  t.equal(conversation.offered_to_id, agent.id, 'offered to the online agent');
  const ticket = (await call(env, 'GET', `/tickets/${conversation.ticket_id}`, { token: agent.token })).json();
  t.equal(ticket.channel, 'webchat');
  t.match(ticket.subject, /Chat with Ada Lovelace/);
  const firstMessages = (await call(env, 'GET', `/tickets/${ticket.id}/messages`, { token: agent.token })).json().data;
  t.match(firstMessages[0].body, /Bot: What do you need\?[\s\S]*Ada Lovelace: Ada Lovelace[\s\S]*Bot: Passing you to a colleague\./, 'the bot transcript is the ticket\'s first message');

  const other = await userFixture(env, a.id, 'agent');
  const claim = await call(env, 'POST', `/webchat/conversations/${conversationId}/claim`, { token: agent.token });
  t.equal(claim.statusCode, 200, claim.body);
  t.match(claim.json(), { conversation_id: conversationId, claimed_by: { id: agent.id } });
  const locked = await call(env, 'POST', `/webchat/conversations/${conversationId}/claim`, { token: other.token });
  t.equal(locked.statusCode, 409);
  t.equal(locked.json().code, 'reply_locked');
  t.equal(locked.json().details.locked_by.id, agent.id);
  const otherReply = await call(env, 'POST', `/webchat/conversations/${conversationId}/reply`, { token: other.token, body: { message: 'me too' } });
  t.equal(otherReply.statusCode, 409);
  t.equal(otherReply.json().code, 'reply_locked', 'only the claimer replies');

  const reply = await call(env, 'POST', `/webchat/conversations/${conversationId}/reply`, { token: agent.token, body: { message: 'How can I help?' } });
  t.equal(reply.statusCode, 201, reply.body);
  t.match(reply.json(), { from: 'agent', text: 'How can I help?' });
  t.equal((await call(env, 'POST', '/webchat/visitor/messages', { headers: asVisitor(visitorToken), body: { message: 'My export fails' } })).statusCode, 201);
  const ticketMessages = (await call(env, 'GET', `/tickets/${ticket.id}/messages`, { token: agent.token })).json().data;
  t.same(ticketMessages.slice(1).map((m: { body: string; is_agent: boolean; channel: string }) => [m.body, m.is_agent, m.channel]),
    [['How can I help?', true, 'webchat'], ['My export fails', false, 'webchat']], 'chat lines are the ticket\'s messages');
  const after = (await call(env, 'GET', `/tickets/${ticket.id}`, { token: agent.token })).json();
  t.equal(after.assigned_agent_id, agent.id, 'claiming assigns the ticket');
  t.ok(after.first_responded_at, 'the agent\'s chat reply is the first response (SLA)');
  const timeline = (await call(env, 'GET', `/tickets/${ticket.id}/events`, { token: agent.token })).json().data.map((e: { type: string }) => e.type);
  t.ok(timeline.includes('message_created'), 'the timeline sees chat');

  const visitorLines = await lines();
  t.same(visitorLines.slice(-3).map((m: { from: string; text: string }) => [m.from, m.text]),
    [['bot', 'Passing you to a colleague.'], ['agent', 'How can I help?'], ['visitor', 'My export fails']]);
  t.ok(visitorLines.some((m: { from: string; text: string }) => m.from === 'agent' && m.text === 'How can I help?'));

  const ended = await call(env, 'POST', `/webchat/conversations/${conversationId}/end`, { token: agent.token });
  t.equal(ended.statusCode, 200);
  t.equal(ended.json().status, 'ended');
  const resolved = (await call(env, 'GET', `/tickets/${ticket.id}`, { token: agent.token })).json();
  t.ok(resolved.resolved_at, 'ending resolves the ticket; the transcript stays on it');
  const late = await call(env, 'POST', '/webchat/visitor/messages', { headers: asVisitor(visitorToken), body: { message: 'hello?' } });
  t.equal(late.statusCode, 409);

  const visitorEvents = await env.deps.db('webchat_events').where({ tenant_id: a.id, conversation_id: conversationId, audience: 'visitor' }).orderBy('seq').pluck('type');
  t.ok(visitorEvents.includes('agent_joined') && visitorEvents.at(-1) === 'ended');
  t.same(env.guard.violations, []);
});

t.test('without a bot: a ticket at once, the offline message, wrong origin and unknown tokens on visitor calls', async (t) => {
  const { env, widget } = await setup(t);
  const started = (await start(env, widget.id, { name: 'Bo', email: 'bo@example.com', message: 'Need help' })).json();
  const lines = (await call(env, 'GET', '/webchat/visitor/messages', { headers: asVisitor(started.visitor_token) })).json().data;
  t.same(lines.map((m: { text: string }) => m.text), ['Welcome!', 'Need help', 'Nobody is here right now.']);
  const foreign = await call(env, 'GET', '/webchat/visitor/messages', { headers: { authorization: `Bearer ${started.visitor_token}`, origin: 'https://evil.example.net' } });
  t.equal(foreign.statusCode, 403);
  const unknown = await call(env, 'GET', '/webchat/visitor/messages', { headers: { authorization: `Bearer hdv_${'x'.repeat(43)}`, origin: ORIGIN } });
  t.equal(unknown.statusCode, 401);
  t.equal((await call(env, 'GET', '/webchat/visitor/messages', {})).statusCode, 401);
  const preflight = await env.app.inject({ method: 'OPTIONS', url: '/api/v1/webchat/visitor/messages', headers: { origin: ORIGIN, 'access-control-request-method': 'POST' } });
  t.equal(preflight.statusCode, 204);
  t.equal(preflight.headers['access-control-allow-origin'], ORIGIN);
  t.match(String(preflight.headers['access-control-allow-headers']), /Authorization/);
});

t.test('a blocked visitor gets 403; unblocking lets them back; visitors are rate-limited', async (t) => {
  // The limit counts per clock minute: on the wall clock, a loop that crossed a minute's end saw its
  // count start again and never reached the limit. Every request of this test arrives at one instant.
  const instant = new Date();
  const { env, a, widget } = await setup(t, { clock: () => instant });
  const started = (await start(env, widget.id, { message: 'hi' })).json();
  const block = await call(env, 'POST', '/webchat/blocks', { token: a.admin.token, body: { visitor_id: started.visitor_id, reason: 'spam' } });
  t.equal(block.statusCode, 201);
  t.equal((await call(env, 'POST', '/webchat/blocks', { token: a.admin.token, body: { visitor_id: started.visitor_id } })).statusCode, 409);
  t.equal((await call(env, 'POST', '/webchat/visitor/messages', { headers: asVisitor(started.visitor_token), body: { message: 'x' } })).statusCode, 403);
  t.equal((await call(env, 'GET', '/webchat/visitor/stream', { headers: asVisitor(started.visitor_token) })).statusCode, 403);
  t.equal((await call(env, 'GET', '/webchat/blocks', { token: a.admin.token })).json().meta.total, 1);
  t.equal((await call(env, 'DELETE', `/webchat/blocks/${block.json().id}`, { token: a.admin.token })).statusCode, 204);

  let last = 0;
  for (let i = 0; i < VISITOR_MESSAGES_PER_MINUTE + 1; i++) {
    last = (await call(env, 'POST', '/webchat/visitor/messages', { headers: asVisitor(started.visitor_token), body: { message: `m${i}` } })).statusCode;
    if (last !== 201) break;
  }
  t.equal(last, 429, 'over the per-visitor limit');
});

t.test('two agents claim at once: exactly one wins, the other gets reply_locked', async (t) => {
  const { env, a, widget } = await setup(t);
  const agents = await Promise.all([userFixture(env, a.id, 'agent'), userFixture(env, a.id, 'agent')]);
  for (let round = 0; round < 5; round++) {
    const { conversation_id: id } = (await start(env, widget.id, { message: `round ${round}` })).json();
    const answers = await Promise.all(agents.map((agent) => call(env, 'POST', `/webchat/conversations/${id}/claim`, { token: agent.token })));
    t.same(answers.map((r) => r.statusCode).sort(), [200, 409], `round ${round}`);
    const loser = answers.find((r) => r.statusCode === 409)!.json();
    t.equal(loser.code, 'reply_locked');
    const row = await env.deps.db('webchat_conversations').where({ tenant_id: a.id, id }).first();
    t.equal(row.assigned_agent_id, answers.find((r) => r.statusCode === 200)!.json().claimed_by.id);
  }
});

t.test('offering: online agents only, least loaded first, never over max_concurrent_conversations; lapses after 60 s', async (t) => {
  const { env, a, widget } = await setup(t);
  const [busy, free] = await Promise.all([userFixture(env, a.id, 'agent'), userFixture(env, a.id, 'agent')]);
  await env.deps.db('users').where({ tenant_id: a.id }).whereIn('id', [busy.id, free.id]).update({ max_concurrent_conversations: 1 });
  const offline = await userFixture(env, a.id, 'agent');
  void offline;
  await call(env, 'POST', '/webchat/presence', { token: busy.token, body: { status: 'online' } });

  const one = (await start(env, widget.id, { message: 'one' })).json().conversation_id;
  const c1 = (await call(env, 'GET', `/webchat/conversations/${one}`, { token: busy.token })).json();
  t.equal(c1.offered_to_id, busy.id);
  t.equal((await call(env, 'POST', `/webchat/conversations/${one}/claim`, { token: busy.token })).statusCode, 200);

  const two = (await start(env, widget.id, { message: 'two' })).json().conversation_id;
  t.equal((await call(env, 'GET', `/webchat/conversations/${two}`, { token: busy.token })).json().offered_to_id, null,
    'the only online agent is at capacity: not offered');

  const presence = await call(env, 'POST', '/webchat/presence', { token: free.token, body: { status: 'online' } });
  t.equal(presence.statusCode, 200);
  t.equal(presence.json().status, 'online');
  t.equal((await call(env, 'GET', `/webchat/conversations/${two}`, { token: busy.token })).json().offered_to_id, free.id,
    'an agent coming online with room is offered the waiting conversation');

  const three = (await start(env, widget.id, { message: 'three' })).json().conversation_id;
  t.equal((await call(env, 'GET', `/webchat/conversations/${three}`, { token: busy.token })).json().offered_to_id, null, 'both at capacity');
  t.equal((await call(env, 'POST', `/webchat/conversations/${one}/end`, { token: busy.token })).statusCode, 200);
  t.equal((await call(env, 'GET', `/webchat/conversations/${three}`, { token: busy.token })).json().offered_to_id, busy.id, 'a freed slot takes the next');

  const waiting = await call(env, 'GET', '/webchat/conversations', { token: busy.token, query: { status: 'waiting' } });
  t.equal(waiting.json().meta.total, 2);
  t.equal((await call(env, 'GET', '/webchat/visitors', { token: busy.token })).json().meta.total, 3, 'visitors online');

  // 61 s later without heartbeats: the sweep announces agents and visitors offline.
  const swept = await chatSweep(env.deps, new Date(Date.now() + 61_000));
  t.equal(swept.agents_offline, 2);
  t.equal(swept.visitors_offline, 3);
  const kinds = await env.deps.db('webchat_events').where({ tenant_id: a.id, audience: 'staff' }).pluck('type');
  t.ok(kinds.includes('presence.changed') && kinds.includes('visitor.offline'));
  t.equal((await call(env, 'DELETE', '/webchat/presence', { token: free.token })).statusCode, 204);
});

t.test('the console stream: two daemons share the queue live; Last-Event-ID resumes; the visitor stream follows', async (t) => {
  const { env, a, widget } = await setup(t);
  const other = await secondApp(t, env, LONG);
  const agent = await userFixture(env, a.id, 'agent');
  const auth = { authorization: `Bearer ${agent.token}` };
  const console2 = await openSse(other.url, '/webchat/stream', auth);
  t.teardown(() => console2.close());
  t.equal(console2.status, 200);
  await new Promise((r) => setTimeout(r, 300));

  // Through daemon 1 (inject): a visitor starts; daemon 2's console sees it.
  const started = (await start(env, widget.id, { message: 'over here' })).json();
  await console2.until(() => console2.events.some((e) => e.event === 'conversation.created' && e.data.id === started.conversation_id), 5000, 'conversation.created');
  await console2.until(() => console2.events.some((e) => e.event === 'message.created' && e.data.text === 'over here'), 5000, 'message.created');
  t.ok(console2.events.some((e) => e.event === 'visitor.online'));

  // The visitor's own stream on daemon 2; an agent's claim and reply through daemon 1 reach it.
  const visitorStream = await openSse(other.url, '/webchat/visitor/stream', asVisitor(started.visitor_token));
  t.teardown(() => visitorStream.close());
  t.equal(visitorStream.status, 200);
  t.equal(visitorStream.headers['access-control-allow-origin'], ORIGIN);
  await visitorStream.until(() => visitorStream.events.some((e) => e.data?.text === 'over here'), 5000, 'replay');
  await call(env, 'POST', `/webchat/conversations/${started.conversation_id}/claim`, { token: agent.token });
  await call(env, 'POST', `/webchat/conversations/${started.conversation_id}/reply`, { token: agent.token, body: { message: 'Hi, Bo' } });
  await visitorStream.until(() => visitorStream.events.some((e) => e.event === 'agent_joined'), 5000, 'agent_joined');
  await visitorStream.until(() => visitorStream.events.some((e) => e.event === 'message' && e.data.text === 'Hi, Bo'), 5000, 'agent reply');
  await console2.until(() => console2.events.some((e) => e.event === 'conversation.updated' && e.data.status === 'active'), 5000, 'claimed');

  // Resume: a new console stream from an earlier id replays exactly what came after it.
  const ids = console2.events.map((e) => e.id!);
  const resumeFrom = ids[1]!;
  const resumed = await openSse(await baseUrlOf(env.app), '/webchat/stream', { ...auth, 'last-event-id': resumeFrom });
  t.teardown(() => resumed.close());
  await resumed.until(() => resumed.events.length >= ids.length - 2, 5000, 'replay');
  t.same(resumed.events.map((e) => e.id).slice(0, ids.length - 2), ids.slice(2), 'the replay starts right after Last-Event-ID');
  const visitorIds = visitorStream.events.map((e) => e.id!);
  const visitorResumed = await openSse(other.url, '/webchat/visitor/stream', { ...asVisitor(started.visitor_token), 'last-event-id': visitorIds.at(-2)! });
  t.teardown(() => visitorResumed.close());
  await visitorResumed.until(() => visitorResumed.events.length >= 1, 5000, 'visitor resume');
  t.same(visitorResumed.events.map((e) => e.id), [visitorIds.at(-1)]);

  // Customers and other tenants see nothing.
  const customer = await userFixture(env, a.id, 'customer');
  t.equal((await call(env, 'GET', '/webchat/conversations', { token: customer.token })).statusCode, 403);
  const b = await tenantFixture(env);
  t.equal((await call(env, 'GET', `/webchat/conversations/${started.conversation_id}`, { token: b.admin.token })).statusCode, 404);
  t.equal((await call(env, 'POST', `/webchat/conversations/${started.conversation_id}/claim`, { token: b.admin.token })).statusCode, 404);
  t.equal((await call(env, 'GET', `/webchat/widgets/${widget.id}`, { token: b.admin.token })).statusCode, 404);
  const streamB = await openSse(other.url, '/webchat/stream', { authorization: `Bearer ${b.admin.token}` });
  t.teardown(() => streamB.close());
  await start(env, widget.id, { message: 'second visitor' });
  await console2.until(() => console2.events.some((e) => e.event === 'message.created' && e.data.text === 'second visitor'), 5000, 'second');
  t.equal(streamB.events.length, 0, 'tenant B\'s console sees nothing of tenant A');
});

t.test('abandonment: a conversation left with the bot ends when the sweep abandons its session', async (t) => {
  const { env, a, widget } = await setup(t, { bot: true });
  const started = (await start(env, widget.id, { message: 'hi' })).json();
  const before = await chatSweep(env.deps, new Date(Date.now() + 10 * 60_000));
  t.equal(before.abandoned, 0);
  const swept = await chatSweep(env.deps, new Date(Date.now() + 31 * 60_000));
  t.equal(swept.abandoned, 1);
  const conversation = (await call(env, 'GET', `/webchat/conversations/${started.conversation_id}`, { token: a.admin.token })).json();
  t.equal(conversation.status, 'ended');
  t.equal(conversation.ticket_id, null, 'it never reached people: no ticket');
  const session = (await call(env, 'GET', '/bot-flow-sessions', { token: a.admin.token, query: { status: 'abandoned' } })).json();
  t.equal(session.meta.total, 1);
  const last = await env.deps.db('webchat_events').where({ tenant_id: a.id, conversation_id: started.conversation_id, audience: 'visitor' })
    .orderBy('seq', 'desc').first();
  t.match(last, { type: 'ended', data: { reason: 'abandoned' } });
  const refused = await call(env, 'POST', '/webchat/visitor/messages', { headers: asVisitor(started.visitor_token), body: { message: 'still there?' } });
  t.equal(refused.statusCode, 409);
});
