import { asArray, asObject, asString, baseOf, epochToIso, extensionFor, headerOf, type ChannelAdapter, type InboundMessage, type MediaRef } from '../adapter.js';
import { MEDIA_MAX_BYTES } from '../vendor-http.js';
import { hmacSha256, sameBytes } from './signatures.js';

/**
 * `messaging_c`: the LINE Messaging API. Webhook: `{destination, events: [{type: "message",
 * message: {id, type, text | fileName}, timestamp (ms), source: {type: "user", userId},
 * webhookEventId}]}`, signed `X-Line-Signature: base64(HMAC-SHA256(channel_secret, body))`.
 * Send: `POST /v2/bot/message/push {to, messages: [{type: "text", text}]}` with `X-Line-Retry-Key`
 * (a retried push is not delivered twice); media: `GET /v2/bot/message/{id}/content`; profile:
 * `GET /v2/bot/profile/{userId}` → `displayName`.
 */
const DEFAULT_BASE = 'https://api.line.me';

function parse(payload: unknown): InboundMessage[] {
  const out: InboundMessage[] = [];
  for (const raw of asArray(asObject(payload).events)) {
    const e = asObject(raw);
    if (e.type !== 'message') continue;
    const m = asObject(e.message);
    const id = asString(m.id);
    const src = asObject(e.source);
    const sender = asString(src.userId) ?? asString(src.groupId) ?? asString(src.roomId);
    if (!id || !sender) continue;
    const type = asString(m.type) ?? 'text';
    const media: MediaRef[] = [];
    let text = '';
    if (type === 'text') text = asString(m.text) ?? '';
    else if (['image', 'video', 'audio', 'file'].includes(type)) media.push({ ref: id, kind: type, filename: asString(m.fileName), contentType: null });
    else if (type === 'sticker') text = '(sticker)';
    else if (type === 'location') text = `Location: ${asString(m.address) ?? `${asString(m.latitude)}, ${asString(m.longitude)}`}`;
    out.push({ externalId: id, lookupKey: null, senderId: sender, senderName: null, text, timestamp: epochToIso(e.timestamp, 'ms'), media });
  }
  return out;
}

const auth = (source: { config: Record<string, string> }) => ({ authorization: `Bearer ${source.config.channel_access_token ?? ''}` });

function sentId(answer: Record<string, unknown>): string | null {
  return asString(asObject(asArray(answer.sentMessages)[0]).id);
}

export const messagingC: ChannelAdapter = {
  channel: 'messaging_c',
  keys: [
    { name: 'api_base_url', secret: false, required: false },
    { name: 'channel_access_token', secret: true, required: true },
    { name: 'channel_secret', secret: true, required: true },
  ],
  defaultBaseUrl: DEFAULT_BASE,
  lookupConfigKey: null,
  handshake: false,
  verify(source, request) {
    const secret = source.config.channel_secret;
    const header = headerOf(request.headers, 'x-line-signature');
    if (!secret || !header) return false;
    return sameBytes(Buffer.from(header, 'utf8'), Buffer.from(hmacSha256(secret, request.rawBody).toString('base64'), 'utf8'));
  },
  lookupKeys: () => [],
  parse,
  async profileName(http, source, senderId) {
    const answer = await http.json('GET', `${baseOf(source, DEFAULT_BASE)}/v2/bot/profile/${encodeURIComponent(senderId)}`, { headers: auth(source) });
    return asString(answer.displayName);
  },
  async sendText(http, source, to, text, idempotencyKey) {
    const answer = await http.json('POST', `${baseOf(source, DEFAULT_BASE)}/v2/bot/message/push`, {
      headers: { ...auth(source), 'x-line-retry-key': idempotencyKey }, json: { to, messages: [{ type: 'text', text: text.slice(0, 5000) }] },
    });
    return { externalId: sentId(answer) };
  },
  async sendMedia(http, source, to, media) {
    const message = media.contentType.startsWith('image/')
      ? { type: 'image', originalContentUrl: media.url, previewImageUrl: media.url }
      : { type: 'text', text: `${media.filename}: ${media.url}` };
    const answer = await http.json('POST', `${baseOf(source, DEFAULT_BASE)}/v2/bot/message/push`, { headers: auth(source), json: { to, messages: [message] } });
    return { externalId: sentId(answer) };
  },
  async fetchMedia(http, source, media) {
    const answer = await http.call('GET', `${baseOf(source, DEFAULT_BASE)}/v2/bot/message/${encodeURIComponent(media.ref)}/content`, { headers: auth(source), maxBytes: MEDIA_MAX_BYTES });
    const contentType = answer.headers['content-type'] ?? 'application/octet-stream';
    return { content: answer.body, contentType, filename: media.filename ?? `${media.kind}-${media.ref}.${extensionFor(contentType)}` };
  },
};
