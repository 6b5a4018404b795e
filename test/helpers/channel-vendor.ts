import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

/**
 * A local stand-in for the five messaging vendors, answering in their documented shapes: the
 * WhatsApp Cloud API (`/{phone_number_id}/messages`, `/{media_id}`, `/{waba_id}/message_templates`),
 * the Telegram Bot API (`/bot<token>/sendMessage`, `/getFile`, `/file/bot<token>/…`), the LINE
 * Messaging API (`/v2/bot/message/push`, `/v2/bot/message/{id}/content`, `/v2/bot/profile/{id}`) and
 * the Messenger / Instagram Send API (`/{id}/messages`, profiles, a CDN for attachments). It records
 * every request; `failNext` makes the next sends fail with a status (429 with Retry-After, 5xx),
 * `brokenMedia` makes a media id answer 404.
 */
export interface ChannelVendorRequest { method: string; path: string; query: Record<string, string>; headers: Record<string, string>; body: Record<string, unknown> }

export interface ChannelVendor {
  url: string;
  requests: ChannelVendorRequest[];
  sends: () => ChannelVendorRequest[];
  failNext: Array<{ status: number; retryAfter?: number }>;
  brokenMedia: Set<string>;
  templates: Array<Record<string, unknown>>;
  bytes: Buffer;
}

export const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000100ffff03000006000557bfab0000000049454e44ae426082', 'hex');

const SEND = /(\/messages$|\/sendMessage$|\/message\/push$|\/sendPhoto$|\/sendDocument$)/;

export async function channelVendor(t: Test): Promise<ChannelVendor> {
  let counter = 0;
  const state: ChannelVendor = {
    url: '', requests: [], failNext: [], brokenMedia: new Set(), bytes: PNG,
    sends: () => state.requests.filter((r) => r.method === 'POST' && SEND.test(r.path)),
    templates: [
      { id: 'tpl-1', name: 'order_update', language: 'en', status: 'APPROVED', category: 'UTILITY', components: [{ type: 'BODY', text: 'Your order {{1}} has shipped.' }] },
      { id: 'tpl-2', name: 'draft_notice', language: 'en', status: 'PENDING', category: 'MARKETING', components: [{ type: 'BODY', text: 'Soon.' }] },
    ],
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://vendor');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]));
      const body = raw && /json/.test(headers['content-type'] ?? '') ? JSON.parse(raw) : {};
      const request = { method: req.method!, path: url.pathname, query: Object.fromEntries(url.searchParams), headers, body };
      state.requests.push(request);
      const json = (status: number, value: unknown, extra: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...extra });
        res.end(JSON.stringify(value));
      };
      const bytes = (name: string) => {
        if (state.brokenMedia.has(name)) return json(404, { error: { message: 'media not found', code: 100 } });
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(state.bytes);
      };
      const path = url.pathname;
      if (req.method === 'POST' && SEND.test(path)) {
        const fail = state.failNext.shift();
        if (fail) return json(fail.status, { error: { message: `vendor says ${fail.status}`, code: fail.status } }, fail.retryAfter !== undefined ? { 'retry-after': String(fail.retryAfter) } : {});
        const id = ++counter;
        if (path.startsWith('/bot')) return json(200, { ok: true, result: { message_id: 9000 + id, chat: { id: body.chat_id }, text: body.text } });
        if (path === '/v2/bot/message/push') return json(200, { sentMessages: [{ id: `line-${id}`, quoteToken: 'q' }] });
        if (body.messaging_product === 'whatsapp') return json(200, { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: `wamid.out-${id}` }] });
        return json(200, { recipient_id: (body.recipient as { id: string }).id, message_id: `m_out-${id}` });
      }
      // Telegram
      const bot = /^\/bot([^/]+)\/getFile$/.exec(path);
      if (bot) return json(200, { ok: true, result: { file_id: body.file_id, file_path: `photos/${String(body.file_id)}.png` } });
      const tgFile = /^\/file\/bot[^/]+\/photos\/(.+)\.png$/.exec(path);
      if (tgFile) return bytes(tgFile[1]!);
      // LINE
      const content = /^\/v2\/bot\/message\/([^/]+)\/content$/.exec(path);
      if (content) return bytes(content[1]!);
      const profile = /^\/v2\/bot\/profile\/([^/]+)$/.exec(path);
      if (profile) return json(200, { displayName: 'Line Customer', userId: profile[1], language: 'en' });
      // Messenger / Instagram CDN
      const cdn = /^\/cdn\/(.+)$/.exec(path);
      if (cdn) return bytes(cdn[1]!);
      // WhatsApp media and templates
      const templates = /^\/([^/]+)\/message_templates$/.exec(path);
      if (templates && req.method === 'GET') return json(200, { data: state.templates, paging: {} });
      if (templates && req.method === 'POST') return json(200, { id: `tpl-${++counter}`, status: 'PENDING', category: body.category });
      const waBytes = /^\/wa-media\/(.+)$/.exec(path);
      if (waBytes) {
        if (headers.authorization !== 'Bearer wa-access-token') return json(401, { error: { message: 'bad token' } });
        return bytes(waBytes[1]!);
      }
      const single = /^\/([^/]+)$/.exec(path);
      if (single && req.method === 'GET') {
        const id = single[1]!;
        const fields = url.searchParams.get('fields');
        if (fields?.includes('first_name')) return json(200, { first_name: 'Page', last_name: 'Customer', id });
        if (fields) return json(200, { name: 'Insta Customer', username: 'insta.customer', id });
        return json(200, { messaging_product: 'whatsapp', url: `${state.url}/wa-media/${id}`, mime_type: 'image/png', sha256: 'x', file_size: state.bytes.length, id });
      }
      json(404, { error: 'no_route' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return state;
}
