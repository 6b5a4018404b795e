import { asArray, asObject, asString, baseOf, epochToIso, extensionFor, headerOf, type ChannelAdapter, type InboundMessage, type MediaRef, type TemplateInfo } from '../adapter.js';
import { MEDIA_MAX_BYTES, VendorError } from '../vendor-http.js';
import { verifyHubSignature } from './signatures.js';

/**
 * `messaging_a`: the WhatsApp Cloud API (Graph API). Webhook: `object: "whatsapp_business_account"`,
 * `entry[].changes[].value` with `metadata.phone_number_id`, `contacts[]` (`wa_id`, `profile.name`)
 * and `messages[]` (`id`, `from`, `timestamp` in seconds, `type` with `text.body` or a media object
 * `{id, mime_type, caption, filename}`). Send: `POST /{phone_number_id}/messages` with
 * `messaging_product: "whatsapp"`; media: `GET /{media_id}` → `{url, mime_type}`, then the URL with the
 * same bearer token. Templates: `GET|POST /{business_account_id}/message_templates`.
 */
const DEFAULT_BASE = 'https://graph.facebook.com/v21.0';
const MEDIA_TYPES = ['image', 'audio', 'video', 'document', 'sticker'];

function parse(payload: unknown): InboundMessage[] {
  const out: InboundMessage[] = [];
  for (const entry of asArray(asObject(payload).entry)) {
    for (const change of asArray(asObject(entry).changes)) {
      const value = asObject(asObject(change).value);
      const phoneNumberId = asString(asObject(value.metadata).phone_number_id);
      const names = new Map<string, string>();
      for (const contact of asArray(value.contacts)) {
        const c = asObject(contact);
        const id = asString(c.wa_id);
        const name = asString(asObject(c.profile).name);
        if (id && name) names.set(id, name);
      }
      for (const raw of asArray(value.messages)) {
        const m = asObject(raw);
        const id = asString(m.id);
        const from = asString(m.from);
        if (!id || !from) continue;
        const type = asString(m.type) ?? 'text';
        const media: MediaRef[] = [];
        let text = '';
        if (type === 'text') text = asString(asObject(m.text).body) ?? '';
        else if (MEDIA_TYPES.includes(type)) {
          const obj = asObject(m[type]);
          const mediaId = asString(obj.id);
          text = asString(obj.caption) ?? '';
          if (mediaId) media.push({ ref: mediaId, kind: type, filename: asString(obj.filename), contentType: asString(obj.mime_type) });
        } else if (type === 'button') text = asString(asObject(m.button).text) ?? '';
        else if (type === 'interactive') {
          const i = asObject(m.interactive);
          text = asString(asObject(i.button_reply).title) ?? asString(asObject(i.list_reply).title) ?? '';
        } else if (type === 'location') {
          const l = asObject(m.location);
          text = `Location: ${asString(l.latitude) ?? '?'}, ${asString(l.longitude) ?? '?'}${l.name ? ` (${asString(l.name)})` : ''}`;
        } else text = `(${type} message)`;
        out.push({ externalId: id, lookupKey: phoneNumberId, senderId: from, senderName: names.get(from) ?? null, text, timestamp: epochToIso(m.timestamp, 's'), media });
      }
    }
  }
  return out;
}

const auth = (token: string | undefined) => ({ authorization: `Bearer ${token ?? ''}` });

function messageIdOf(answer: Record<string, unknown>): string | null {
  return asString(asObject(asArray(answer.messages)[0]).id);
}

function templateOf(raw: unknown): TemplateInfo {
  const t = asObject(raw);
  return {
    externalId: asString(t.id), name: asString(t.name) ?? '', language: asString(t.language) ?? 'en',
    category: asString(t.category), status: (asString(t.status) ?? 'pending').toLowerCase(), components: asArray(t.components),
  };
}

export const messagingA: ChannelAdapter = {
  channel: 'messaging_a',
  keys: [
    { name: 'api_base_url', secret: false, required: false },
    { name: 'phone_number_id', secret: false, required: true },
    { name: 'business_account_id', secret: false, required: false },
    { name: 'access_token', secret: true, required: true },
    { name: 'app_secret', secret: true, required: true },
    { name: 'verify_token', secret: true, required: true },
  ],
  defaultBaseUrl: DEFAULT_BASE,
  lookupConfigKey: 'phone_number_id',
  handshake: true,
  verify: (source, request) => verifyHubSignature(source.config.app_secret, headerOf(request.headers, 'x-hub-signature-256'), request.rawBody),
  lookupKeys: (payload) => [...new Set(parse(payload).map((m) => m.lookupKey).filter((k): k is string => !!k)
    .concat(asArray(asObject(payload).entry).flatMap((e) => asArray(asObject(e).changes).map((c) => asString(asObject(asObject(asObject(c).value).metadata).phone_number_id)).filter((k): k is string => !!k))))],
  parse,
  parseFailures(payload) {
    const out: Array<{ lookupKey: string | null; externalId: string; error: string }> = [];
    for (const entry of asArray(asObject(payload).entry)) {
      for (const change of asArray(asObject(entry).changes)) {
        const value = asObject(asObject(change).value);
        const lookupKey = asString(asObject(value.metadata).phone_number_id);
        for (const raw of asArray(value.statuses)) {
          const st = asObject(raw);
          const id = asString(st.id);
          if (!id || st.status !== 'failed') continue;
          const err = asObject(asArray(st.errors)[0]);
          out.push({ lookupKey, externalId: id, error: `the vendor could not deliver it: ${asString(err.title) ?? asString(err.message) ?? 'failed'}${err.code !== undefined ? ` (${asString(err.code)})` : ''}` });
        }
      }
    }
    return out;
  },
  async sendText(http, source, to, text) {
    const answer = await http.json('POST', `${baseOf(source, DEFAULT_BASE)}/${encodeURIComponent(source.config.phone_number_id ?? '')}/messages`, {
      headers: auth(source.config.access_token),
      json: { messaging_product: 'whatsapp', recipient_type: 'individual', to, type: 'text', text: { preview_url: false, body: text } },
    });
    return { externalId: messageIdOf(answer) };
  },
  async sendMedia(http, source, to, media) {
    const type = media.contentType.startsWith('image/') ? 'image' : media.contentType.startsWith('video/') ? 'video' : media.contentType.startsWith('audio/') ? 'audio' : 'document';
    const answer = await http.json('POST', `${baseOf(source, DEFAULT_BASE)}/${encodeURIComponent(source.config.phone_number_id ?? '')}/messages`, {
      headers: auth(source.config.access_token),
      json: { messaging_product: 'whatsapp', recipient_type: 'individual', to, type, [type]: type === 'document' ? { link: media.url, filename: media.filename } : { link: media.url } },
    });
    return { externalId: messageIdOf(answer) };
  },
  async fetchMedia(http, source, media) {
    const info = await http.json('GET', `${baseOf(source, DEFAULT_BASE)}/${encodeURIComponent(media.ref)}`, { headers: auth(source.config.access_token) });
    const url = asString(info.url);
    if (!url) throw new VendorError('the media lookup returned no url', null, false);
    const file = await http.call('GET', url, { headers: auth(source.config.access_token), maxBytes: MEDIA_MAX_BYTES });
    const contentType = asString(info.mime_type) ?? media.contentType ?? file.headers['content-type'] ?? 'application/octet-stream';
    return { content: file.body, contentType, filename: media.filename ?? `${media.kind}-${media.ref}.${extensionFor(contentType)}` };
  },
  async listTemplates(http, source) {
    const answer = await http.json('GET', `${baseOf(source, DEFAULT_BASE)}/${encodeURIComponent(source.config.business_account_id ?? '')}/message_templates?limit=100`, { headers: auth(source.config.access_token) });
    return asArray(answer.data).map(templateOf).filter((t) => t.name);
  },
  async submitTemplate(http, source, template) {
    const answer = await http.json('POST', `${baseOf(source, DEFAULT_BASE)}/${encodeURIComponent(source.config.business_account_id ?? '')}/message_templates`, {
      headers: auth(source.config.access_token), json: template,
    });
    return { externalId: asString(answer.id), name: template.name, language: template.language, category: asString(answer.category) ?? template.category, status: (asString(answer.status) ?? 'pending').toLowerCase(), components: template.components };
  },
  async sendTemplate(http, source, to, template) {
    const components = template.parameters.length ? [{ type: 'body', parameters: template.parameters.map((p) => ({ type: 'text', text: p.text })) }] : [];
    const answer = await http.json('POST', `${baseOf(source, DEFAULT_BASE)}/${encodeURIComponent(source.config.phone_number_id ?? '')}/messages`, {
      headers: auth(source.config.access_token),
      json: { messaging_product: 'whatsapp', recipient_type: 'individual', to, type: 'template', template: { name: template.name, language: { code: template.language }, components } },
    });
    return { externalId: messageIdOf(answer) };
  },
};
