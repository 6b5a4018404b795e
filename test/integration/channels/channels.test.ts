import t from 'tap';
import { createHash, createHmac } from 'node:crypto';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { channelVendor, PNG } from '../../helpers/channel-vendor.js';
import { processInbound } from '../../../src/channels/inbound.js';
import { drainDeliveries } from '../../../src/channels/outbound.js';

/** Messaging and social channels (CONTRACT §17) against a local server playing the five vendors. */
t.setTimeout(180_000);

const hub = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const line = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('base64');
const sha = (value: string) => createHash('sha256').update(value).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function post(env: TestEnv, path: string, payload: unknown, headers: Record<string, string>) {
  return env.app.inject({ method: 'POST', url: `/api/v1${path}`, payload: typeof payload === 'string' ? payload : JSON.stringify(payload), headers: { 'content-type': 'application/json', ...headers } });
}

/** Waits until the tenant's inbound rows are processed and no delivery is due now. */
async function settle(env: TestEnv, tenantId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    await processInbound(env.deps, new Date(), { tenantId });
    await drainDeliveries(env.deps, new Date(), { tenantId });
    const [{ pending }] = await env.deps.db('channel_inbound').where({ tenant_id: tenantId, status: 'pending' }).count({ pending: '*' });
    const [{ due }] = await env.deps.db('channel_deliveries').where({ tenant_id: tenantId }).where('next_attempt_at', '<=', new Date()).count({ due: '*' });
    if (Number(pending) === 0 && Number(due) === 0) return;
    await sleep(25);
  }
  throw new Error('channel work did not settle');
}

function waPayload(phoneNumberId: string, message: Record<string, unknown>, name = 'Wendy Whats') {
  return {
    object: 'whatsapp_business_account',
    entry: [{ id: 'WABA-1', changes: [{ field: 'messages', value: {
      messaging_product: 'whatsapp', metadata: { display_phone_number: '15550001111', phone_number_id: phoneNumberId },
      contacts: [{ profile: { name }, wa_id: message.from }], messages: [message],
    } }] }],
  };
}

t.test('channels', async (t) => {
  const vendor = await channelVendor(t);
  const env = await testApp(t, { webhooksAllowPrivate: true });
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent');
  const now = () => Math.floor(Date.now() / 1000);
  const sources: Record<string, { id: string; webhook_url: string }> = {};

  const configs: Record<string, Record<string, string>> = {
    messaging_a: { api_base_url: vendor.url, phone_number_id: 'PN-1', business_account_id: 'WABA-1', access_token: 'wa-access-token', app_secret: 'wa-app-secret', verify_token: 'wa-verify-token' },
    messaging_b: { api_base_url: vendor.url, bot_token: '123456:tg-bot-token-abcdef', secret_token: 'tg-secret-token-0123456789' },
    messaging_c: { api_base_url: vendor.url, channel_access_token: 'line-access-token-abcdef', channel_secret: 'line-channel-secret' },
    social_a: { api_base_url: vendor.url, page_id: 'PAGE-1', access_token: 'fb-access-token-abcdef', app_secret: 'fb-app-secret', verify_token: 'fb-verify-token' },
    social_b: { api_base_url: vendor.url, instagram_account_id: 'IG-1', access_token: 'ig-access-token-abcdef', app_secret: 'ig-app-secret', verify_token: 'ig-verify-token' },
  };

  await t.test('sources: created with encrypted secrets, read back masked, with their webhook URL', async (t) => {
    for (const [channel, config] of Object.entries(configs)) {
      const res = await call(env, 'POST', '/channel-sources', { token: admin, body: { channel, name: `${channel} source`, config } });
      t.equal(res.statusCode, 201, res.body);
      const body = res.json();
      t.match(body, { channel, status: 'active', last_error: null });
      for (const key of ['access_token', 'app_secret', 'bot_token', 'channel_secret', 'channel_access_token', 'verify_token', 'secret_token']) {
        if (config[key]) t.match(body.config[key], /^\*{8}/, `${channel} ${key} masked`);
      }
      t.notMatch(res.body, /wa-app-secret|tg-bot-token|line-channel-secret|fb-app-secret|ig-app-secret/);
      t.equal(body.config.api_base_url, vendor.url);
      sources[channel] = body;
    }
    t.match(sources.messaging_a!.webhook_url, /\/api\/v1\/integrations\/messaging_a\/webhook$/);
    t.match(sources.messaging_b!.webhook_url, new RegExp(`/api/v1/integrations/messaging_b/webhook/${sha(configs.messaging_b!.bot_token!)}$`));
    const rows = await env.deps.db('channel_sources').where({ tenant_id: tenant.id });
    t.equal(rows.length, 5);
    t.ok(rows.every((r) => !/secret|token/.test(JSON.stringify(r.config)) && r.secrets_enc?.startsWith('v1.')), 'secrets only encrypted');
    const list = await call(env, 'GET', '/channel-sources', { token: agent.token });
    t.equal(list.statusCode, 200);
    t.equal(list.json().meta.total, 5);
    t.notMatch(list.body, /wa-app-secret|tg-bot-token/);
  });

  await t.test('sources: bad config, other roles and other tenants', async (t) => {
    const missing = await call(env, 'POST', '/channel-sources', { token: admin, body: { channel: 'messaging_a', name: 'x', config: { phone_number_id: '1' } } });
    t.equal(missing.statusCode, 422);
    t.match(missing.json().details, [{ field: 'config.access_token' }, { field: 'config.app_secret' }, { field: 'config.verify_token' }]);
    const unknown = await call(env, 'POST', '/channel-sources', { token: admin, body: { channel: 'messaging_c', name: 'x', config: { ...configs.messaging_c, page_id: 'no' } } });
    t.equal(unknown.statusCode, 422);
    t.match(unknown.json().details, [{ field: 'config.page_id' }]);
    const badUrl = await call(env, 'POST', '/channel-sources', { token: admin, body: { channel: 'messaging_c', name: 'x', config: { ...configs.messaging_c, api_base_url: 'ftp://x' } } });
    t.equal(badUrl.statusCode, 422);
    t.equal((await call(env, 'POST', '/channel-sources', { token: agent.token, body: { channel: 'messaging_c', name: 'x', config: configs.messaging_c } })).statusCode, 403);
    const id = sources.messaging_c!.id;
    t.equal((await call(env, 'GET', `/channel-sources/${id}`, { token: other.admin.token })).statusCode, 404, 'another tenant sees nothing');
    t.equal((await call(env, 'PATCH', `/channel-sources/${id}`, { token: other.admin.token, body: { name: 'mine' } })).statusCode, 404);
    t.equal((await call(env, 'DELETE', `/channel-sources/${id}`, { token: other.admin.token })).statusCode, 404);
    // A masked secret sent back keeps the stored one; a new name is kept.
    const read = (await call(env, 'GET', `/channel-sources/${id}`, { token: admin })).json();
    const patched = await call(env, 'PATCH', `/channel-sources/${id}`, { token: admin, body: { name: 'LINE', config: read.config } });
    t.equal(patched.statusCode, 200, patched.body);
    t.equal(patched.json().name, 'LINE');
    const row = await env.deps.db('channel_sources').where({ tenant_id: tenant.id, id }).first();
    t.equal(JSON.parse(env.deps.box.decrypt(row.secrets_enc)).channel_secret, 'line-channel-secret');
  });

  let waTicket = '';
  await t.test('messaging_a: handshake, signature, a new ticket, threading, replay and media', async (t) => {
    const hs = await env.app.inject({ method: 'GET', url: '/api/v1/integrations/messaging_a/webhook', query: { 'hub.mode': 'subscribe', 'hub.verify_token': 'wa-verify-token', 'hub.challenge': '1158201444' } });
    t.equal(hs.statusCode, 200);
    t.equal(hs.body, '1158201444');
    const hsBad = await env.app.inject({ method: 'GET', url: '/api/v1/integrations/messaging_a/webhook', query: { 'hub.mode': 'subscribe', 'hub.verify_token': 'nope', 'hub.challenge': '1' } });
    t.equal(hsBad.statusCode, 403);
    t.equal((await env.app.inject({ method: 'GET', url: '/api/v1/integrations/social_a/webhook', query: { 'hub.mode': 'subscribe', 'hub.verify_token': 'wa-verify-token', 'hub.challenge': '1' } })).statusCode, 403, 'a token of another channel does not answer');

    const first = JSON.stringify(waPayload('PN-1', { from: '15551234567', id: 'wamid.IN-1', timestamp: String(now()), type: 'text', text: { body: 'My parcel is late\nOrder A-1001' } }));
    const forged = await post(env, '/integrations/messaging_a/webhook', first, { 'x-hub-signature-256': hub('wrong-secret', first) });
    t.equal(forged.statusCode, 401);
    t.equal((await post(env, '/integrations/messaging_a/webhook', first, {})).statusCode, 401, 'no signature');
    t.equal((await env.deps.db('channel_inbound')).length, 0, 'a bad signature creates nothing');

    const ok = await post(env, '/integrations/messaging_a/webhook', first, { 'x-hub-signature-256': hub('wa-app-secret', first) });
    t.equal(ok.statusCode, 200, ok.body);
    t.same(ok.json(), { received: 1, duplicates: 0 });
    await settle(env, tenant.id);
    const tickets = await env.deps.db('tickets').where({ tenant_id: tenant.id, channel: 'messaging_a' });
    t.equal(tickets.length, 1);
    t.equal(tickets[0].subject, 'My parcel is late');
    waTicket = tickets[0].id;
    const customer = await env.deps.db('users').where({ tenant_id: tenant.id, id: tickets[0].requester_id }).first();
    t.match(customer, { name: 'Wendy Whats', role: 'customer', phone: '+15551234567' });

    const replay = await post(env, '/integrations/messaging_a/webhook', first, { 'x-hub-signature-256': hub('wa-app-secret', first) });
    t.same(replay.json(), { received: 0, duplicates: 1 }, 'a replayed message id is ignored');

    const image = JSON.stringify(waPayload('PN-1', { from: '15551234567', id: 'wamid.IN-2', timestamp: String(now()), type: 'image', image: { id: 'MEDIA-1', mime_type: 'image/png', caption: 'Photo of the box' } }));
    t.equal((await post(env, '/integrations/messaging_a/webhook', image, { 'x-hub-signature-256': hub('wa-app-secret', image) })).statusCode, 200);
    vendor.brokenMedia.add('MEDIA-2');
    const broken = JSON.stringify(waPayload('PN-1', { from: '15551234567', id: 'wamid.IN-3', timestamp: String(now()), type: 'document', document: { id: 'MEDIA-2', filename: 'invoice.pdf', mime_type: 'application/pdf' } }));
    t.equal((await post(env, '/integrations/messaging_a/webhook', broken, { 'x-hub-signature-256': hub('wa-app-secret', broken) })).statusCode, 200);
    await settle(env, tenant.id);

    t.equal((await env.deps.db('tickets').where({ tenant_id: tenant.id, channel: 'messaging_a' })).length, 1, 'later messages join the open ticket');
    const messages = (await call(env, 'GET', `/tickets/${waTicket}/messages`, { token: admin })).json().data;
    t.equal(messages.length, 3, 'no duplicate message');
    const withImage = messages.find((m: { body: string }) => m.body === 'Photo of the box');
    t.match(withImage, { is_agent: false, channel: 'messaging_a', delivery: null, attachments: [{ content_type: 'image/png', size: PNG.length }] });
    const noted = messages.find((m: { body: string }) => /could not be downloaded/.test(m.body));
    t.ok(noted, 'a failed media download leaves a note');
    t.same(noted.attachments, []);
    t.match(vendor.requests.find((r) => r.path === '/wa-media/MEDIA-1'), { headers: { authorization: 'Bearer wa-access-token' } }, 'media fetched through the vendor API with the token');
  });

  await t.test('messaging_a: a staff reply is sent with its delivery; 429 and 5xx are retried with back-off', async (t) => {
    const reply = await call(env, 'POST', `/tickets/${waTicket}/messages`, { token: agent.token, body: { body: 'We are on it.' } });
    t.equal(reply.statusCode, 201, reply.body);
    t.match(reply.json().delivery, { status: 'pending', error: null, external_id: null });
    await settle(env, tenant.id);
    const sent = vendor.sends().at(-1)!;
    t.match(sent, { path: '/PN-1/messages', headers: { authorization: 'Bearer wa-access-token' }, body: { messaging_product: 'whatsapp', to: '15551234567', type: 'text', text: { body: 'We are on it.' } } });
    const after = (await call(env, 'GET', `/tickets/${waTicket}/messages`, { token: admin })).json().data.find((m: { id: string }) => m.id === reply.json().id);
    t.match(after.delivery, { status: 'sent', error: null, external_id: /^wamid\.out-/ });

    // The vendor reports later that it could not deliver it: the delivery turns failed.
    const statuses = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: 'WABA-1', changes: [{ field: 'messages', value: {
      messaging_product: 'whatsapp', metadata: { display_phone_number: '15550001111', phone_number_id: 'PN-1' },
      statuses: [{ id: after.delivery.external_id, status: 'failed', timestamp: String(now()), recipient_id: '15551234567', errors: [{ code: 131047, title: 'Re-engagement message' }] }],
    } }] }] });
    t.same((await post(env, '/integrations/messaging_a/webhook', statuses, { 'x-hub-signature-256': hub('wa-app-secret', statuses) })).json(), { received: 0, duplicates: 0 });
    const undelivered = (await call(env, 'GET', `/tickets/${waTicket}/messages`, { token: admin })).json().data.find((m: { id: string }) => m.id === reply.json().id);
    t.match(undelivered.delivery, { status: 'failed', error: /Re-engagement message \(131047\)/, external_id: after.delivery.external_id }, 'a vendor status callback marks it failed');
    t.equal((await call(env, 'POST', `/tickets/${waTicket}/messages/${reply.json().id}/dispatch`, { token: agent.token })).json().delivery.status, 'sent', 'and it can be dispatched again');

    const note = await call(env, 'POST', `/tickets/${waTicket}/messages`, { token: agent.token, body: { body: 'internal', is_private: true } });
    t.equal(note.json().delivery, null, 'private notes are never sent');

    vendor.failNext.push({ status: 429, retryAfter: 60 }, { status: 503 });
    const before = vendor.sends().length;
    const retried = await call(env, 'POST', `/tickets/${waTicket}/messages`, { token: agent.token, body: { body: 'Second reply' } });
    await settle(env, tenant.id);
    let row = await env.deps.db('channel_deliveries').where({ tenant_id: tenant.id, message_id: retried.json().id }).first();
    t.match(row, { status: 'pending', attempts: 1, error: /429/ });
    t.ok(row.next_attempt_at.getTime() - Date.now() > 55_000, 'Retry-After (60 s) beats the first back-off step');
    await drainDeliveries(env.deps, new Date(Date.now() + 61_000), { tenantId: tenant.id });
    row = await env.deps.db('channel_deliveries').where({ tenant_id: tenant.id, message_id: retried.json().id }).first();
    t.match(row, { status: 'pending', attempts: 2, error: /503/ });
    await drainDeliveries(env.deps, new Date(Date.now() + 61_000 + 121_000), { tenantId: tenant.id });
    row = await env.deps.db('channel_deliveries').where({ tenant_id: tenant.id, message_id: retried.json().id }).first();
    t.match(row, { status: 'sent', attempts: 3, error: null, next_attempt_at: null });
    t.equal(vendor.sends().length - before, 3);

    vendor.failNext.push({ status: 400 });
    const refused = await call(env, 'POST', `/tickets/${waTicket}/messages`, { token: agent.token, body: { body: 'Refused one' } });
    await settle(env, tenant.id);
    const failedMsg = (await call(env, 'GET', `/tickets/${waTicket}/messages`, { token: admin })).json().data.find((m: { id: string }) => m.id === refused.json().id);
    t.match(failedMsg.delivery, { status: 'failed', error: /400/ }, 'a refusal is not retried');
    const dispatched = await call(env, 'POST', `/tickets/${waTicket}/messages/${refused.json().id}/dispatch`, { token: agent.token });
    t.equal(dispatched.statusCode, 200, dispatched.body);
    t.match(dispatched.json().delivery, { status: 'sent', error: null });
    const again = await call(env, 'POST', `/tickets/${waTicket}/messages/${refused.json().id}/dispatch`, { token: agent.token });
    t.equal(again.statusCode, 409, 'a sent message is not dispatched twice');
    t.equal((await call(env, 'POST', `/tickets/${waTicket}/messages/${refused.json().id}/dispatch`, { token: other.admin.token })).statusCode, 404);
  });

  await t.test('messaging_a: the 24-hour rule and approved templates', async (t) => {
    const old = JSON.stringify(waPayload('PN-1', { from: '15559990000', id: 'wamid.OLD-1', timestamp: String(now() - 25 * 3600), type: 'text', text: { body: 'Written yesterday' } }, 'Late Larry'));
    t.equal((await post(env, '/integrations/messaging_a/webhook', old, { 'x-hub-signature-256': hub('wa-app-secret', old) })).statusCode, 200);
    await settle(env, tenant.id);
    const ticket = await env.deps.db('tickets').where({ tenant_id: tenant.id, channel: 'messaging_a', subject: 'Written yesterday' }).first();
    const before = vendor.sends().length;
    const free = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body: 'Free text' } });
    t.equal(free.statusCode, 409);
    t.match(free.json(), { code: 'conflict', details: { reason: 'template_required' } });
    t.equal((await env.deps.db('messages').where({ tenant_id: tenant.id, ticket_id: ticket.id })).length, 1, 'the refused reply is not kept');

    const list = await call(env, 'GET', '/integrations/messaging_a/templates', { token: admin });
    t.equal(list.statusCode, 200, list.body);
    t.match(list.json().data, [{ name: 'draft_notice', status: 'pending' }, { name: 'order_update', status: 'approved', language: 'en' }]);
    const pending = await call(env, 'POST', '/integrations/messaging_a/templates/send', { token: agent.token, body: { ticket_id: ticket.id, template_name: 'draft_notice' } });
    t.equal(pending.statusCode, 422, 'only approved templates');
    const send = await call(env, 'POST', '/integrations/messaging_a/templates/send', { token: agent.token, body: { ticket_id: ticket.id, template_name: 'order_update', parameters: [{ type: 'text', text: 'A-1001' }] } });
    t.equal(send.statusCode, 201, send.body);
    t.match(send.json(), { body: 'Your order A-1001 has shipped.', is_agent: true, delivery: { status: 'sent' } });
    t.equal(vendor.sends().length, before + 1);
    t.match(vendor.sends().at(-1), { body: { type: 'template', to: '15559990000', template: { name: 'order_update', language: { code: 'en' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'A-1001' }] }] } } });
    const audit = await env.deps.db('audit_log').where({ tenant_id: tenant.id, action: 'channel_template.sent' });
    t.equal(audit.length, 1, 'audited');

    const created = await call(env, 'POST', '/integrations/messaging_a/templates', { token: admin, body: { name: 'welcome_back', category: 'UTILITY', components: [{ type: 'BODY', text: 'Welcome back' }] } });
    t.equal(created.statusCode, 201, created.body);
    t.match(created.json(), { name: 'welcome_back', status: 'pending', language: 'en' });
    t.match(vendor.requests.at(-1), { method: 'POST', path: '/WABA-1/message_templates', body: { name: 'welcome_back', category: 'UTILITY' } });
    t.equal((await call(env, 'GET', '/integrations/messaging_a/templates', { token: agent.token })).statusCode, 403, 'agents lack whatsapp_templates:read');
  });

  await t.test('messaging_b: token hash and secret token, duplicates by chat and message id, photos, replies', async (t) => {
    const path = `/integrations/messaging_b/webhook/${sha(configs.messaging_b!.bot_token!)}`;
    const update = { update_id: 1001, message: { message_id: 7, from: { id: 424242, first_name: 'Tina', last_name: 'Gram' }, chat: { id: 424242, type: 'private' }, date: now(), caption: 'Broken screen', photo: [{ file_id: 'small', width: 90, height: 90 }, { file_id: 'TGPHOTO', width: 800, height: 800 }] } };
    t.equal((await post(env, path, update, { 'x-telegram-bot-api-secret-token': 'wrong' })).statusCode, 401);
    t.equal((await post(env, `/integrations/messaging_b/webhook/${sha('other')}`, update, { 'x-telegram-bot-api-secret-token': 'tg-secret-token-0123456789' })).statusCode, 401);
    t.equal((await env.deps.db('channel_inbound').where({ source_id: sources.messaging_b!.id })).length, 0);
    const ok = await post(env, path, update, { 'x-telegram-bot-api-secret-token': 'tg-secret-token-0123456789' });
    t.same(ok.json(), { received: 1, duplicates: 0 });
    t.same((await post(env, path, { ...update, update_id: 1002 }, { 'x-telegram-bot-api-secret-token': 'tg-secret-token-0123456789' })).json(), { received: 0, duplicates: 1 }, 'same chat and message id');
    await settle(env, tenant.id);
    const ticket = await env.deps.db('tickets').where({ tenant_id: tenant.id, channel: 'messaging_b' }).first();
    t.equal(ticket.subject, 'Broken screen');
    t.match(await env.deps.db('users').where({ tenant_id: tenant.id, id: ticket.requester_id }).first(), { name: 'Tina Gram' });
    t.equal((await env.deps.db('attachments').where({ tenant_id: tenant.id, ticket_id: ticket.id })).length, 1, 'the largest photo size is fetched');
    t.ok(vendor.requests.some((r) => r.path === `/bot${configs.messaging_b!.bot_token}/getFile` && r.body.file_id === 'TGPHOTO'));
    await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body: 'Send it in' } });
    await settle(env, tenant.id);
    t.match(vendor.sends().at(-1), { path: `/bot${configs.messaging_b!.bot_token}/sendMessage`, body: { chat_id: '424242', text: 'Send it in' } });
  });

  await t.test('messaging_c: signature, profile name, push with a retry key', async (t) => {
    const body = JSON.stringify({ destination: 'U-bot', events: [{ type: 'message', mode: 'active', timestamp: Date.now(), webhookEventId: 'EV1', source: { type: 'user', userId: 'U-line-1' }, replyToken: 'rt', message: { id: 'LINE-1', type: 'text', text: 'Hello from LINE' } }] });
    t.equal((await post(env, '/integrations/messaging_c/webhook', body, { 'x-line-signature': line('wrong', body) })).statusCode, 401);
    t.equal((await post(env, '/integrations/messaging_c/webhook', body, { 'x-line-signature': line('line-channel-secret', body) })).statusCode, 200);
    await settle(env, tenant.id);
    const ticket = await env.deps.db('tickets').where({ tenant_id: tenant.id, channel: 'messaging_c' }).first();
    t.match(await env.deps.db('users').where({ tenant_id: tenant.id, id: ticket.requester_id }).first(), { name: 'Line Customer' });
    const reply = await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body: 'Hi there' } });
    await settle(env, tenant.id);
    t.match(vendor.sends().at(-1), { path: '/v2/bot/message/push', headers: { authorization: 'Bearer line-access-token-abcdef', 'x-line-retry-key': reply.json().id }, body: { to: 'U-line-1', messages: [{ type: 'text', text: 'Hi there' }] } });
  });

  for (const [channel, account, object, secret, verify] of [['social_a', 'PAGE-1', 'page', 'fb-app-secret', 'fb-verify-token'], ['social_b', 'IG-1', 'instagram', 'ig-app-secret', 'ig-verify-token']] as const) {
    await t.test(`${channel}: handshake, signature, attachments by URL, replies`, async (t) => {
      const hs = await env.app.inject({ method: 'GET', url: `/api/v1/integrations/${channel}/webhook`, query: { 'hub.mode': 'subscribe', 'hub.verify_token': verify, 'hub.challenge': 'abc' } });
      t.equal(hs.body, 'abc');
      const body = JSON.stringify({ object, entry: [{ id: account, time: Date.now(), messaging: [
        { sender: { id: `${channel}-user` }, recipient: { id: account }, timestamp: Date.now(), message: { mid: `${channel}-mid-1`, text: 'Need help', attachments: [{ type: 'image', payload: { url: `${vendor.url}/cdn/${channel}.png` } }] } },
        { sender: { id: account }, recipient: { id: `${channel}-user` }, timestamp: Date.now(), message: { mid: `${channel}-echo`, text: 'echo', is_echo: true } },
      ] }] });
      t.equal((await post(env, `/integrations/${channel}/webhook`, body, { 'x-hub-signature-256': hub('other', body) })).statusCode, 401);
      const ok = await post(env, `/integrations/${channel}/webhook`, body, { 'x-hub-signature-256': hub(secret, body) });
      t.same(ok.json(), { received: 1, duplicates: 0 }, 'echoes are not customer messages');
      await settle(env, tenant.id);
      const ticket = await env.deps.db('tickets').where({ tenant_id: tenant.id, channel }).first();
      t.ok(ticket);
      t.match(await env.deps.db('users').where({ tenant_id: tenant.id, id: ticket.requester_id }).first(), { name: channel === 'social_a' ? 'Page Customer' : 'Insta Customer' });
      t.equal((await env.deps.db('attachments').where({ tenant_id: tenant.id, ticket_id: ticket.id })).length, 1);
      await call(env, 'POST', `/tickets/${ticket.id}/messages`, { token: agent.token, body: { body: 'Happy to help' } });
      await settle(env, tenant.id);
      t.match(vendor.sends().at(-1), { path: `/${account}/messages`, body: { recipient: { id: `${channel}-user` }, message: { text: 'Happy to help' } } });
    });
  }

  await t.test('tenant isolation: a payload goes only to the source whose secret signed it', async (t) => {
    const theirs = await call(env, 'POST', '/channel-sources', { token: other.admin.token, body: { channel: 'messaging_a', name: 'same number', config: { ...configs.messaging_a, app_secret: 'their-secret', verify_token: 'their-verify' } } });
    t.equal(theirs.statusCode, 201);
    const body = JSON.stringify(waPayload('PN-1', { from: '15550000001', id: 'wamid.ISO-1', timestamp: String(now()), type: 'text', text: { body: 'For tenant B' } }));
    t.same((await post(env, '/integrations/messaging_a/webhook', body, { 'x-hub-signature-256': hub('their-secret', body) })).json(), { received: 1, duplicates: 0 });
    await settle(env, other.id);
    await settle(env, tenant.id);
    t.equal((await env.deps.db('tickets').where({ tenant_id: other.id, channel: 'messaging_a' })).length, 1);
    t.equal((await env.deps.db('tickets').where({ tenant_id: tenant.id, subject: 'For tenant B' })).length, 0);
    const list = await call(env, 'GET', '/channel-sources', { token: other.admin.token });
    t.equal(list.json().meta.total, 1, 'each tenant lists its own sources');
  });

  await t.test('disconnect: secrets wiped, webhooks stop matching, pending deliveries fail', async (t) => {
    const id = sources.social_b!.id;
    t.equal((await call(env, 'DELETE', `/channel-sources/${id}`, { token: agent.token })).statusCode, 403);
    t.equal((await call(env, 'DELETE', `/channel-sources/${id}`, { token: admin })).statusCode, 204);
    const read = (await call(env, 'GET', `/channel-sources/${id}`, { token: admin })).json();
    t.match(read, { status: 'disconnected' });
    t.same(Object.keys(read.config), ['api_base_url', 'instagram_account_id']);
    const body = JSON.stringify({ object: 'instagram', entry: [{ id: 'IG-1', time: Date.now(), messaging: [{ sender: { id: 'x' }, recipient: { id: 'IG-1' }, timestamp: Date.now(), message: { mid: 'after-disconnect', text: 'hi' } }] }] });
    t.equal((await post(env, '/integrations/social_b/webhook', body, { 'x-hub-signature-256': hub('ig-app-secret', body) })).statusCode, 401);
  });
});
