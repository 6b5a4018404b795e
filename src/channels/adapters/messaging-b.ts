import { asArray, asObject, asString, baseOf, epochToIso, extensionFor, headerOf, type ChannelAdapter, type InboundMessage, type MediaRef } from '../adapter.js';
import { MEDIA_MAX_BYTES, VendorError } from '../vendor-http.js';
import { sameBytes } from './signatures.js';

/**
 * `messaging_b`: the Telegram Bot API. Webhook: an `Update` (`update_id`, `message` with
 * `message_id`, `from` `{id, first_name, last_name, username}`, `chat.id`, `date` in seconds, `text`
 * or `caption`, `photo[]` sizes / `document` / `voice` / `audio` / `video` with `file_id`). The
 * request carries `X-Telegram-Bot-Api-Secret-Token` (the `secret_token` given to `setWebhook`).
 * A duplicate is the same chat and message id. Send: `POST /bot<token>/sendMessage {chat_id, text}`;
 * media: `POST /bot<token>/getFile {file_id}` → `file_path`, then `GET /file/bot<token>/<file_path>`.
 */
const DEFAULT_BASE = 'https://api.telegram.org';

function parse(payload: unknown): InboundMessage[] {
  const update = asObject(payload);
  const m = asObject(update.message ?? update.channel_post);
  const messageId = asString(m.message_id);
  const chatId = asString(asObject(m.chat).id);
  if (!messageId || !chatId) return [];
  const from = asObject(m.from);
  const name = [asString(from.first_name), asString(from.last_name)].filter(Boolean).join(' ') || asString(from.username);
  const media: MediaRef[] = [];
  const photos = asArray(m.photo);
  if (photos.length) {
    const largest = asObject(photos[photos.length - 1]);
    const id = asString(largest.file_id);
    if (id) media.push({ ref: id, kind: 'photo', filename: null, contentType: 'image/jpeg' });
  }
  for (const kind of ['document', 'voice', 'audio', 'video', 'video_note', 'sticker']) {
    const obj = asObject(m[kind]);
    const id = asString(obj.file_id);
    if (id) media.push({ ref: id, kind, filename: asString(obj.file_name), contentType: asString(obj.mime_type) });
  }
  return [{
    externalId: `${chatId}:${messageId}`, lookupKey: null, senderId: chatId, senderName: name || null,
    text: asString(m.text) ?? asString(m.caption) ?? '', timestamp: epochToIso(m.date, 's'), media,
  }];
}

const botUrl = (source: { config: Record<string, string> }, method: string) =>
  `${baseOf(source as never, DEFAULT_BASE)}/bot${source.config.bot_token ?? ''}/${method}`;

function resultOf(answer: Record<string, unknown>): Record<string, unknown> {
  if (answer.ok !== true) throw new VendorError(`the Bot API answered ok: false (${asString(answer.description) ?? 'no description'})`, null, false);
  return asObject(answer.result);
}

export const messagingB: ChannelAdapter = {
  channel: 'messaging_b',
  keys: [
    { name: 'api_base_url', secret: false, required: false },
    { name: 'bot_token', secret: true, required: true },
    { name: 'secret_token', secret: true, required: true },
  ],
  defaultBaseUrl: DEFAULT_BASE,
  lookupConfigKey: null,
  handshake: false,
  verify(source, request) {
    const expected = source.config.secret_token;
    const given = headerOf(request.headers, 'x-telegram-bot-api-secret-token');
    return !!expected && sameBytes(Buffer.from(given, 'utf8'), Buffer.from(expected, 'utf8'));
  },
  lookupKeys: () => [],
  parse,
  async sendText(http, source, to, text) {
    const result = resultOf(await http.json('POST', botUrl(source, 'sendMessage'), { json: { chat_id: to, text } }));
    return { externalId: asString(result.message_id) };
  },
  async sendMedia(http, source, to, media) {
    const image = media.contentType.startsWith('image/');
    const result = resultOf(await http.json('POST', botUrl(source, image ? 'sendPhoto' : 'sendDocument'), { json: { chat_id: to, [image ? 'photo' : 'document']: media.url } }));
    return { externalId: asString(result.message_id) };
  },
  async fetchMedia(http, source, media) {
    const file = resultOf(await http.json('POST', botUrl(source, 'getFile'), { json: { file_id: media.ref } }));
    const path = asString(file.file_path);
    if (!path) throw new VendorError('getFile returned no file_path', null, false);
    const answer = await http.call('GET', `${baseOf(source, DEFAULT_BASE)}/file/bot${source.config.bot_token ?? ''}/${path.split('/').map(encodeURIComponent).join('/')}`, { maxBytes: MEDIA_MAX_BYTES });
    const contentType = media.contentType ?? answer.headers['content-type'] ?? 'application/octet-stream';
    return { content: answer.body, contentType, filename: media.filename ?? path.split('/').pop() ?? `${media.kind}.${extensionFor(contentType)}` };
  },
};
