import t from 'tap';
import { createHash } from 'node:crypto';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { channelVendor } from '../../helpers/channel-vendor.js';
import { processInbound } from '../../../src/channels/inbound.js';
import { drainDeliveries } from '../../../src/channels/outbound.js';

/** Bot flows answer first on messaging channels (CONTRACT §16, §17), against the local vendor stand-in. */
t.setTimeout(180_000);

const sha = (value: string) => createHash('sha256').update(value).digest('hex');
const SECRET = 'tg-secret-token-0123456789';

const FLOW = {
  name: 'Telegram front door', active: true, start_node: 'ask',
  nodes: [
    { id: 'ask', type: 'question', text: 'What do you need?', choices: [{ label: 'Billing', target_node: 'email' }, { label: 'Nothing', target_node: 'bye' }] },
    { id: 'email', type: 'collect', field: 'email', text: 'Your email?', next: 'human' },
    { id: 'human', type: 'handoff', text: 'Passing you to a person.' },
    { id: 'bye', type: 'end', text: 'Bye!' },
  ],
};

t.test('bot flows on messaging_b', async (t) => {
  const vendor = await channelVendor(t);
  const env: TestEnv = await testApp(t, { webhooksAllowPrivate: true });
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent');

  const flow = await call(env, 'POST', '/bot-flows', { token: admin, body: FLOW });
  t.equal(flow.statusCode, 201, flow.body);
  const flowId = flow.json().id as string;
  const foreign = await call(env, 'POST', '/bot-flows', { token: other.admin.token, body: FLOW });
  t.equal(foreign.statusCode, 201);

  const botToken = '777:tg-bot-with-a-flow';
  const config = { api_base_url: vendor.url, bot_token: botToken, secret_token: SECRET };

  // Isolation and validation: only a flow of the tenant may answer on its source.
  for (const bad of [foreign.json().id, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
    const res = await call(env, 'POST', '/channel-sources', { token: admin, body: { channel: 'messaging_b', name: 'Bot', config: { ...config, bot_flow_id: bad } } });
    t.equal(res.statusCode, 422, `refused: ${bad}`);
    t.match(res.json().details, [{ field: 'config.bot_flow_id' }]);
  }
  t.equal((await env.deps.db('channel_sources').where({ tenant_id: tenant.id })).length, 0, 'nothing stored');

  const created = await call(env, 'POST', '/channel-sources', { token: admin, body: { channel: 'messaging_b', name: 'Bot', config: { ...config, bot_flow_id: flowId } } });
  t.equal(created.statusCode, 201, created.body);
  const source = created.json();
  t.equal(source.config.bot_flow_id, flowId, 'read back as plain config');
  const patchedAway = await call(env, 'PATCH', `/channel-sources/${source.id}`, { token: admin, body: { config: { bot_flow_id: foreign.json().id } } });
  t.equal(patchedAway.statusCode, 422, 'another tenant\'s flow refused on PATCH too');

  const plain = await call(env, 'POST', '/channel-sources', { token: admin, body: { channel: 'messaging_b', name: 'No bot', config: { api_base_url: vendor.url, bot_token: '888:tg-bot-without-flow', secret_token: SECRET } } });
  t.equal(plain.statusCode, 201);

  let updateId = 5000;
  async function say(token: string, chat: number, text: string): Promise<void> {
    updateId += 1;
    const res = await env.app.inject({
      method: 'POST', url: `/api/v1/integrations/messaging_b/webhook/${sha(token)}`,
      payload: JSON.stringify({ update_id: updateId, message: { message_id: updateId, from: { id: chat, first_name: 'Tina', last_name: 'Gram' }, chat: { id: chat, type: 'private' }, date: Math.floor(Date.now() / 1000), text } }),
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET },
    });
    t.equal(res.statusCode, 200, res.body);
    await settle();
  }
  /** Until the tenant's inbound rows are processed (the route also processes after commit) and no delivery is due. */
  async function settle(): Promise<void> {
    for (let i = 0; i < 200; i++) {
      await processInbound(env.deps, new Date(), { tenantId: tenant.id });
      await drainDeliveries(env.deps, new Date(), { tenantId: tenant.id });
      const [{ pending }] = await env.deps.db('channel_inbound').where({ tenant_id: tenant.id, status: 'pending' }).count({ pending: '*' });
      const [{ due }] = await env.deps.db('channel_deliveries').where({ tenant_id: tenant.id }).where('next_attempt_at', '<=', new Date()).count({ due: '*' });
      if (Number(pending) === 0 && Number(due) === 0) {
        // Bot lines go out after the commit of whichever processor took the row: wait until the vendor is quiet.
        let seen = -1;
        while (seen !== vendor.requests.length) {
          seen = vendor.requests.length;
          await new Promise((resolve) => setTimeout(resolve, 40));
        }
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('channel work did not settle');
  }
  const sentTo = (token: string, chat: number) => vendor.sends()
    .filter((r) => r.path === `/bot${token}/sendMessage` && String(r.body.chat_id) === String(chat)).map((r) => r.body.text as string);
  const ticketsOf = () => env.deps.db('tickets').where({ tenant_id: tenant.id, channel: 'messaging_b' });

  await t.test('a question with choices, an email collected, hand-off with the transcript, then people', async (t) => {
    await say(botToken, 1001, 'hi');
    t.same(sentTo(botToken, 1001), ['What do you need?\n1. Billing\n2. Nothing'], 'the bot asks through the vendor');
    t.equal((await ticketsOf()).length, 0, 'no ticket while the bot talks');
    await say(botToken, 1001, 'billing');
    await say(botToken, 1001, 'not an address');
    await say(botToken, 1001, 'Tina@Example.com');
    t.same(sentTo(botToken, 1001).slice(1), ['Your email?', 'That does not look like an email address. Your email?', 'Passing you to a person.']);
    const session = await env.deps.db('bot_sessions').where({ tenant_id: tenant.id, channel: 'messaging_b' }).first();
    t.match(session, { flow_id: flowId, status: 'handed_off' });
    t.same(session.fields, { email: 'tina@example.com' });
    const read = await call(env, 'GET', `/bot-flow-sessions/${session.id}`, { token: admin });
    t.equal(read.statusCode, 200);
    t.match(read.json(), { channel: 'messaging_b', status: 'handed_off' });
    t.same(read.json().transcript.map((e: { from: string }) => e.from), ['visitor', 'bot', 'visitor', 'bot', 'visitor', 'bot', 'visitor', 'bot']);

    const tickets = await ticketsOf();
    t.equal(tickets.length, 1, 'hand-off opens the ticket');
    t.equal(tickets[0].subject, 'hi', 'named by the customer\'s first line');
    const first = await env.deps.db('messages').where({ tenant_id: tenant.id, ticket_id: tickets[0].id }).orderBy('created_at').first();
    t.match(first.body, /^Tina Gram: hi\nBot: What do you need\?/);
    t.match(first.body, /Tina Gram: Tina@Example\.com\nBot: Passing you to a person\.$/);
    t.ok(await env.deps.db('channel_tickets').where({ tenant_id: tenant.id, ticket_id: tickets[0].id, source_id: source.id }).first(), 'linked to the source');

    const before = sentTo(botToken, 1001).length;
    await say(botToken, 1001, 'any news?');
    t.equal(sentTo(botToken, 1001).length, before, 'the bot stays quiet once people have it');
    const messages = await env.deps.db('messages').where({ tenant_id: tenant.id, ticket_id: tickets[0].id }).orderBy('created_at');
    t.equal(messages.at(-1).body, 'any news?', 'later messages join the ticket');
    t.equal((await ticketsOf()).length, 1);

    const reply = await call(env, 'POST', `/tickets/${tickets[0].id}/messages`, { token: agent.token, body: { body: 'We are on it' } });
    t.equal(reply.statusCode, 201, reply.body);
    await settle();
    t.equal(sentTo(botToken, 1001).at(-1), 'We are on it', 'the agent\'s reply goes out');
  });

  await t.test('completed: the next message starts the flow again', async (t) => {
    await say(botToken, 2002, 'hello');
    await say(botToken, 2002, '2');
    t.same(sentTo(botToken, 2002), ['What do you need?\n1. Billing\n2. Nothing', 'Bye!']);
    const sessions = await env.deps.db('bot_sessions').where({ tenant_id: tenant.id, channel: 'messaging_b' }).orderBy('started_at');
    t.equal(sessions.at(-1).status, 'completed');
    await say(botToken, 2002, 'me again');
    t.equal(sentTo(botToken, 2002).at(-1), 'What do you need?\n1. Billing\n2. Nothing');
    t.equal((await env.deps.db('bot_sessions').where({ tenant_id: tenant.id, channel: 'messaging_b', status: 'active' })).length, 1);
    t.equal((await ticketsOf()).length, 1, 'no ticket for a completed conversation');
  });

  await t.test('a source without a flow behaves as before', async (t) => {
    await say('888:tg-bot-without-flow', 3003, 'Straight to people');
    t.same(sentTo('888:tg-bot-without-flow', 3003), [], 'no bot line');
    const ticket = (await ticketsOf()).find((row) => row.subject === 'Straight to people');
    t.ok(ticket, 'a ticket at once');
    const first = await env.deps.db('messages').where({ tenant_id: tenant.id, ticket_id: ticket.id }).first();
    t.equal(first.body, 'Straight to people');
  });

  await t.test('a flow deactivated: the source goes straight to people', async (t) => {
    const off = await call(env, 'PATCH', `/bot-flows/${flowId}`, { token: admin, body: { active: false } });
    t.equal(off.statusCode, 200, off.body);
    // chat 2002 has an active session: the inactive flow hands it off with its transcript.
    await say(botToken, 2002, 'still there?');
    const sessions = await env.deps.db('bot_sessions').where({ tenant_id: tenant.id, channel: 'messaging_b' }).orderBy('started_at');
    t.equal(sessions.at(-1).status, 'handed_off');
    await say(botToken, 4004, 'New person');
    t.same(sentTo(botToken, 4004), [], 'an inactive flow starts nothing');
    t.equal((await ticketsOf()).length, 4);
  });
});
