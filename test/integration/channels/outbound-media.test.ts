import t from 'tap';
import { createHmac } from 'node:crypto';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { channelVendor } from '../../helpers/channel-vendor.js';
import { multipart, PNG_1X1, type FilePart } from '../../helpers/conversation.js';
import { processInbound } from '../../../src/channels/inbound.js';
import { drainDeliveries } from '../../../src/channels/outbound.js';
import { MEDIA_LINK_TTL_MS, mediaToken } from '../../../src/channels/media.js';

/** Outbound media (CONTRACT §17): a reply's attachments reach each vendor by a signed, expiring link. */
t.setTimeout(180_000);

const hub = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const line = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('base64');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

function post(env: TestEnv, path: string, payload: string, headers: Record<string, string>) {
  return env.app.inject({ method: 'POST', url: `/api/v1${path}`, payload, headers: { 'content-type': 'application/json', ...headers } });
}

async function settle(env: TestEnv, tenantId: string, at = () => new Date()): Promise<void> {
  for (let i = 0; i < 200; i++) {
    await processInbound(env.deps, at(), { tenantId });
    await drainDeliveries(env.deps, at(), { tenantId });
    const [{ pending }] = await env.deps.db('channel_inbound').where({ tenant_id: tenantId, status: 'pending' }).count({ pending: '*' });
    const [{ due }] = await env.deps.db('channel_deliveries').where({ tenant_id: tenantId }).where('next_attempt_at', '<=', at()).count({ due: '*' });
    if (Number(pending) === 0 && Number(due) === 0) return;
    await sleep(25);
  }
  throw new Error('channel work did not settle');
}

t.test('outbound media', async (t) => {
  const vendor = await channelVendor(t);
  const env = await testApp(t, { webhooksAllowPrivate: true });
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const now = () => Math.floor(Date.now() / 1000);
  const botToken = '123456:tg-bot-token-abcdef';
  const configs: Record<string, Record<string, string>> = {
    messaging_a: { api_base_url: vendor.url, phone_number_id: 'PN-1', business_account_id: 'WABA-1', access_token: 'wa-access-token', app_secret: 'wa-app-secret', verify_token: 'wa-verify-token' },
    messaging_b: { api_base_url: vendor.url, bot_token: botToken, secret_token: 'tg-secret-token-0123456789' },
    messaging_c: { api_base_url: vendor.url, channel_access_token: 'line-access-token-abcdef', channel_secret: 'line-channel-secret' },
    social_a: { api_base_url: vendor.url, page_id: 'PAGE-1', access_token: 'fb-access-token-abcdef', app_secret: 'fb-app-secret', verify_token: 'fb-verify-token' },
    social_b: { api_base_url: vendor.url, instagram_account_id: 'IG-1', access_token: 'ig-access-token-abcdef', app_secret: 'ig-app-secret', verify_token: 'ig-verify-token' },
  };
  for (const [channel, config] of Object.entries(configs)) {
    const res = await call(env, 'POST', '/channel-sources', { token: tenant.admin.token, body: { channel, name: `${channel} source`, config } });
    t.equal(res.statusCode, 201, res.body);
  }

  // One inbound text message per channel opens one ticket each.
  const wa = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: 'WABA-1', changes: [{ field: 'messages', value: {
    messaging_product: 'whatsapp', metadata: { display_phone_number: '15550001111', phone_number_id: 'PN-1' },
    contacts: [{ profile: { name: 'Wendy' }, wa_id: '15551234567' }], messages: [{ from: '15551234567', id: 'wamid.M-1', timestamp: String(now()), type: 'text', text: { body: 'Hello' } }],
  } }] }] });
  t.equal((await post(env, '/integrations/messaging_a/webhook', wa, { 'x-hub-signature-256': hub('wa-app-secret', wa) })).statusCode, 200);
  const tg = JSON.stringify({ update_id: 1, message: { message_id: 7, from: { id: 424242, first_name: 'Tina' }, chat: { id: 424242, type: 'private' }, date: now(), text: 'Hello' } });
  const tgHash = (await env.deps.db('channel_sources').where({ tenant_id: tenant.id, channel: 'messaging_b' }).first()) && (await call(env, 'GET', '/channel-sources', { token: tenant.admin.token })).json().data.find((s: { channel: string }) => s.channel === 'messaging_b').webhook_url.split('/').pop();
  t.equal((await post(env, `/integrations/messaging_b/webhook/${tgHash}`, tg, { 'x-telegram-bot-api-secret-token': 'tg-secret-token-0123456789' })).statusCode, 200);
  const ln = JSON.stringify({ destination: 'U-bot', events: [{ type: 'message', mode: 'active', timestamp: Date.now(), webhookEventId: 'EV1', source: { type: 'user', userId: 'U-line-1' }, replyToken: 'rt', message: { id: 'LINE-1', type: 'text', text: 'Hello' } }] });
  t.equal((await post(env, '/integrations/messaging_c/webhook', ln, { 'x-line-signature': line('line-channel-secret', ln) })).statusCode, 200);
  for (const [channel, account, object, secret] of [['social_a', 'PAGE-1', 'page', 'fb-app-secret'], ['social_b', 'IG-1', 'instagram', 'ig-app-secret']] as const) {
    const body = JSON.stringify({ object, entry: [{ id: account, time: Date.now(), messaging: [{ sender: { id: `${channel}-user` }, recipient: { id: account }, timestamp: Date.now(), message: { mid: `${channel}-mid-1`, text: 'Hello' } }] }] });
    t.equal((await post(env, `/integrations/${channel}/webhook`, body, { 'x-hub-signature-256': hub(secret, body) })).statusCode, 200);
  }
  await settle(env, tenant.id);
  const ticketOf = async (channel: string) => (await env.deps.db('tickets').where({ tenant_id: tenant.id, channel }).first()).id as string;

  const reply = async (ticketId: string, body: string, files: FilePart[]) => {
    const res = await call(env, 'POST', `/tickets/${ticketId}/messages`, { token: agent.token, body: { body } });
    t.equal(res.statusCode, 201, res.body);
    const form = multipart(files);
    const up = await call(env, 'POST', `/tickets/${ticketId}/messages/${res.json().id}/attachments`, { token: agent.token, body: form.payload, headers: form.headers });
    t.equal(up.statusCode, 201, up.body);
    return { id: res.json().id as string, attachments: up.json().data as Array<{ id: string }> };
  };
  const fetchLink = (url: string) => env.app.inject({ method: 'GET', url: new URL(url).pathname });
  const deliveryOf = async (ticketId: string, messageId: string) =>
    (await call(env, 'GET', `/tickets/${ticketId}/messages`, { token: tenant.admin.token })).json().data.find((m: { id: string }) => m.id === messageId).delivery;

  const linkOf: Record<string, (body: Record<string, any>) => string> = {
    messaging_a: (b) => b.image.link,
    messaging_b: (b) => b.photo,
    messaging_c: (b) => b.messages[0].originalContentUrl,
    social_a: (b) => b.message.attachment.payload.url,
    social_b: (b) => b.message.attachment.payload.url,
  };
  let waLink = '';
  let waAttachment = '';

  for (const channel of Object.keys(configs)) {
    await t.test(`${channel}: the text, then the image by a link that answers its exact bytes`, async (t) => {
      const ticketId = await ticketOf(channel);
      const before = vendor.sends().length;
      const sent = await reply(ticketId, `Photo for ${channel}`, [{ filename: 'pixel.png', type: 'image/png', content: PNG_1X1 }]);
      await settle(env, tenant.id);
      const sends = vendor.sends().slice(before);
      t.equal(sends.length, 2, 'one text and one media message');
      const media = sends[1]!;
      if (channel === 'messaging_a') t.match(media, { path: '/PN-1/messages', body: { messaging_product: 'whatsapp', to: '15551234567', type: 'image', image: { link: /\/api\/v1\/media\// } } });
      if (channel === 'messaging_b') t.match(media, { path: `/bot${botToken}/sendPhoto`, body: { chat_id: '424242', photo: /\/api\/v1\/media\// } });
      if (channel === 'messaging_c') t.match(media, { path: '/v2/bot/message/push', body: { to: 'U-line-1', messages: [{ type: 'image', originalContentUrl: /\/api\/v1\/media\//, previewImageUrl: /\/api\/v1\/media\// }] } });
      if (channel === 'social_a') t.match(media, { path: '/PAGE-1/messages', body: { recipient: { id: 'social_a-user' }, message: { attachment: { type: 'image', payload: { url: /\/api\/v1\/media\// } } } } });
      if (channel === 'social_b') t.match(media, { path: '/IG-1/messages', body: { recipient: { id: 'social_b-user' }, message: { attachment: { type: 'image', payload: { url: /\/api\/v1\/media\// } } } } });
      const url = linkOf[channel]!(media.body as Record<string, any>);
      t.ok(url.startsWith(env.deps.config.siteUrl), 'the link is on the site URL');
      const got = await fetchLink(url);
      t.equal(got.statusCode, 200);
      t.same(got.rawPayload, PNG_1X1, 'the exact bytes');
      t.equal(got.headers['content-type'], 'image/png');
      t.equal(got.headers['x-content-type-options'], 'nosniff');
      t.match(await deliveryOf(ticketId, sent.id), { status: 'sent', error: null });
      const row = await env.deps.db('channel_deliveries').where({ tenant_id: tenant.id, message_id: sent.id }).first();
      t.same(row.parts.map((p: { key: string }) => p.key), ['text', `attachment:${sent.attachments[0]!.id}`], 'each part recorded once');
      if (channel === 'messaging_a') { waLink = url; waAttachment = sent.attachments[0]!.id; }
    });
  }

  await t.test('a tampered, expired or foreign token is refused', async (t) => {
    const token = decodeURIComponent(new URL(waLink).pathname.split('/').pop()!);
    t.equal(token.length, 70);
    const payload = Buffer.from(token.slice(0, 48), 'base64url');
    const expiry = payload.readUInt32BE(32);
    t.ok(expiry * 1000 - Date.now() > MEDIA_LINK_TTL_MS - 3600_000, 'valid for 24 hours');
    payload.writeUInt32BE(expiry + 3600, 32);
    const tampered = `${payload.toString('base64url')}${token.slice(48)}`;
    t.equal((await env.app.inject({ method: 'GET', url: `/api/v1/media/${tampered}` })).statusCode, 404, 'a longer expiry breaks the signature');
    const flipped = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    const bad = await env.app.inject({ method: 'GET', url: `/api/v1/media/${flipped}` });
    t.equal(bad.statusCode, 404);
    t.equal(bad.json().code, 'resource_not_found');
    t.equal((await env.app.inject({ method: 'GET', url: '/api/v1/media/garbage' })).statusCode, 404);
    const expired = mediaToken(env.deps, tenant.id, waAttachment, new Date(Date.now() - MEDIA_LINK_TTL_MS - 60_000));
    t.equal((await env.app.inject({ method: 'GET', url: `/api/v1/media/${expired}` })).statusCode, 404, 'an expired link');
    const foreign = mediaToken(env.deps, other.id, waAttachment, new Date());
    t.equal((await env.app.inject({ method: 'GET', url: `/api/v1/media/${foreign}` })).statusCode, 404, 'another tenant cannot reach the attachment');
    const fresh = mediaToken(env.deps, tenant.id, waAttachment, new Date());
    t.equal((await env.app.inject({ method: 'GET', url: `/api/v1/media/${fresh}` })).statusCode, 200);
  });

  await t.test('a vendor 5xx on the media part is retried, without resending the text', async (t) => {
    const ticketId = await ticketOf('messaging_a');
    const res = await call(env, 'POST', `/tickets/${ticketId}/messages`, { token: agent.token, body: { body: 'Retry me' } });
    await settle(env, tenant.id);
    const before = vendor.sends().length;
    vendor.failNext.push({ status: 503 });
    const form = multipart([{ filename: 'pixel.png', type: 'image/png', content: PNG_1X1 }]);
    t.equal((await call(env, 'POST', `/tickets/${ticketId}/messages/${res.json().id}/attachments`, { token: agent.token, body: form.payload, headers: form.headers })).statusCode, 201);
    await settle(env, tenant.id);
    t.match(await deliveryOf(ticketId, res.json().id), { status: 'pending', error: /503/ }, 'pending with the error while retrying');
    await settle(env, tenant.id, () => new Date(Date.now() + 31_000));
    const sends = vendor.sends().slice(before);
    t.equal(sends.length, 2, 'the failed media attempt and its retry');
    t.ok(sends.every((s) => (s.body as { type: string }).type === 'image'), 'the text is not sent again');
    t.equal(vendor.sends().filter((s) => (s.body as { text?: { body: string } }).text?.body === 'Retry me').length, 1);
    t.match(await deliveryOf(ticketId, res.json().id), { status: 'sent', error: null });
  });

  await t.test('text and two attachments: three messages, in order', async (t) => {
    const ticketId = await ticketOf('social_a');
    const before = vendor.sends().length;
    const sent = await reply(ticketId, 'Two files', [
      { filename: 'pixel.png', type: 'image/png', content: PNG_1X1 },
      { filename: 'invoice.pdf', type: 'application/pdf', content: PDF },
    ]);
    await settle(env, tenant.id);
    const sends = vendor.sends().slice(before);
    t.equal(sends.length, 3);
    t.match(sends[0], { body: { message: { text: 'Two files' } } });
    t.match(sends[1], { body: { message: { attachment: { type: 'image' } } } });
    t.match(sends[2], { body: { message: { attachment: { type: 'file' } } } });
    const pdf = await fetchLink((sends[2]!.body as Record<string, any>).message.attachment.payload.url);
    t.equal(pdf.statusCode, 200);
    t.same(pdf.rawPayload, PDF);
    t.equal(pdf.headers['content-type'], 'application/pdf');
    t.match(await deliveryOf(ticketId, sent.id), { status: 'sent' });
  });
});
