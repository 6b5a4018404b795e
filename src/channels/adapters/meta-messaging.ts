import { asArray, asObject, asString, baseOf, epochToIso, extensionFor, headerOf, type ChannelAdapter, type ChannelName, type InboundMessage } from '../adapter.js';
import { MEDIA_MAX_BYTES, VendorError } from '../vendor-http.js';
import { verifyHubSignature } from './signatures.js';

/**
 * `social_a` (the Messenger Platform) and `social_b` (Instagram messaging) share one webhook shape:
 * `{object: "page" | "instagram", entry: [{id, time, messaging: [{sender: {id}, recipient: {id},
 * timestamp (ms), message: {mid, text, attachments: [{type, payload: {url}}], is_echo}}]}]}`, signed
 * with `X-Hub-Signature-256`, and one Send API: `POST /{page_id | instagram_account_id}/messages
 * {recipient: {id}, messaging_type: "RESPONSE", message: {text}}` → `{recipient_id, message_id}`.
 * Attachments carry a URL to fetch; the profile is `GET /{id}?fields=…`.
 */
const DEFAULT_BASE = 'https://graph.facebook.com/v21.0';

function parse(payload: unknown): InboundMessage[] {
  const out: InboundMessage[] = [];
  for (const rawEntry of asArray(asObject(payload).entry)) {
    const entry = asObject(rawEntry);
    const accountId = asString(entry.id);
    for (const raw of asArray(entry.messaging)) {
      const event = asObject(raw);
      const m = asObject(event.message);
      const mid = asString(m.mid);
      const sender = asString(asObject(event.sender).id);
      if (!mid || !sender || m.is_echo === true) continue;
      const media = asArray(m.attachments).flatMap((a) => {
        const att = asObject(a);
        const url = asString(asObject(att.payload).url);
        return url ? [{ ref: url, kind: asString(att.type) ?? 'file', filename: null, contentType: null }] : [];
      });
      out.push({
        externalId: mid, lookupKey: asString(asObject(event.recipient).id) ?? accountId, senderId: sender, senderName: null,
        text: asString(m.text) ?? '', timestamp: epochToIso(event.timestamp, 'ms'), media,
      });
    }
  }
  return out;
}

function metaAdapter(channel: ChannelName, accountKey: string, profileFields: string): ChannelAdapter {
  const auth = (source: { config: Record<string, string> }) => ({ authorization: `Bearer ${source.config.access_token ?? ''}` });
  const sendUrl = (source: { id: string; config: Record<string, string> }) => `${baseOf(source, DEFAULT_BASE)}/${encodeURIComponent(source.config[accountKey] ?? '')}/messages`;
  return {
    channel,
    keys: [
      { name: 'api_base_url', secret: false, required: false },
      { name: accountKey, secret: false, required: true },
      { name: 'access_token', secret: true, required: true },
      { name: 'app_secret', secret: true, required: true },
      { name: 'verify_token', secret: true, required: true },
    ],
    defaultBaseUrl: DEFAULT_BASE,
    lookupConfigKey: accountKey,
    handshake: true,
    verify: (source, request) => verifyHubSignature(source.config.app_secret, headerOf(request.headers, 'x-hub-signature-256'), request.rawBody),
    lookupKeys: (payload) => [...new Set(asArray(asObject(payload).entry).map((e) => asString(asObject(e).id)).filter((k): k is string => !!k))],
    parse,
    async profileName(http, source, senderId) {
      const answer = await http.json('GET', `${baseOf(source, DEFAULT_BASE)}/${encodeURIComponent(senderId)}?fields=${profileFields}`, { headers: auth(source) });
      return asString(answer.name) ?? ([asString(answer.first_name), asString(answer.last_name)].filter(Boolean).join(' ') || asString(answer.username));
    },
    async sendText(http, source, to, text) {
      const answer = await http.json('POST', sendUrl(source), { headers: auth(source), json: { recipient: { id: to }, messaging_type: 'RESPONSE', message: { text } } });
      return { externalId: asString(answer.message_id) };
    },
    async sendMedia(http, source, to, media) {
      const type = media.contentType.startsWith('image/') ? 'image' : media.contentType.startsWith('video/') ? 'video' : media.contentType.startsWith('audio/') ? 'audio' : 'file';
      const answer = await http.json('POST', sendUrl(source), {
        headers: auth(source), json: { recipient: { id: to }, messaging_type: 'RESPONSE', message: { attachment: { type, payload: { url: media.url, is_reusable: false } } } },
      });
      return { externalId: asString(answer.message_id) };
    },
    async fetchMedia(http, _source, media) {
      // The attachment URL is the vendor's CDN; it is fetched through the same SSRF guard.
      const answer = await http.call('GET', media.ref, { maxBytes: MEDIA_MAX_BYTES });
      if (!answer.body.length) throw new VendorError('the attachment was empty', answer.status, false);
      const contentType = answer.headers['content-type']?.split(';')[0] ?? 'application/octet-stream';
      return { content: answer.body, contentType, filename: `${media.kind}.${extensionFor(contentType)}` };
    },
  };
}

export const socialA = metaAdapter('social_a', 'page_id', 'first_name,last_name');
export const socialB = metaAdapter('social_b', 'instagram_account_id', 'name,username');
