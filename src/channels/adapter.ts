import type { IncomingHttpHeaders } from 'node:http';
import type { VendorHttp } from './vendor-http.js';

/**
 * The one small interface every messaging and social channel speaks (CONTRACT §17). An adapter is
 * pure vendor knowledge: how its webhook is signed and shaped, and which endpoints send text and
 * media, fetch media and list templates. It never touches the database; src/channels does.
 */
export type ChannelName = 'messaging_a' | 'messaging_b' | 'messaging_c' | 'social_a' | 'social_b';
export const CHANNEL_NAMES: readonly ChannelName[] = ['messaging_a', 'messaging_b', 'messaging_c', 'social_a', 'social_b'];

/** A source as an adapter sees it: its plain config and its decrypted secrets, in one map. */
export interface AdapterSource {
  id: string;
  config: Record<string, string>;
}

/** A piece of media on an inbound message: the vendor's reference (an id or a URL) and what it said of it. */
export interface MediaRef {
  ref: string;
  kind: string;
  filename: string | null;
  contentType: string | null;
}

/** One message a customer sent, as parsed from a webhook. */
export interface InboundMessage {
  /** The vendor's message id (the deduplication key). */
  externalId: string;
  /** Which source of the vendor it reached (phone number id, page id, account id), when the payload says. */
  lookupKey: string | null;
  /** Phone number, user id or chat id: where replies go. */
  senderId: string;
  senderName: string | null;
  text: string;
  /** The vendor's time of the message, as RFC 3339 (the 24-hour rule reads it). */
  timestamp: string | null;
  media: MediaRef[];
}

export interface WebhookRequest {
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /** Path parameters (`tokenHash` of messaging_b). */
  params: Record<string, string>;
}

export interface FetchedMedia { content: Buffer; contentType: string; filename: string }

export interface TemplateInfo {
  externalId: string | null;
  name: string;
  language: string;
  category: string | null;
  status: string;
  components: unknown[];
}

export interface TemplateSend { name: string; language: string; parameters: Array<{ type: 'text'; text: string }> }

export interface ConfigKey { name: string; secret: boolean; required: boolean }

export interface ChannelAdapter {
  channel: ChannelName;
  /** The config keys of CONTRACT §17 (plus the defaults this adapter assumes). */
  keys: readonly ConfigKey[];
  defaultBaseUrl: string;
  /** The config key that names the source in the vendor's payloads (null: the signature alone decides). */
  lookupConfigKey: string | null;
  /** Does the GET handshake exist for this channel (`hub.*`)? */
  handshake: boolean;
  /** The request carries a valid signature (or secret token) of this source. Constant-time. */
  verify(source: AdapterSource, request: WebhookRequest): boolean;
  /** The lookup keys a payload names (to find candidate sources before verifying). */
  lookupKeys(payload: unknown): string[];
  /** The customer messages of a verified payload (statuses, echoes and other events are left out). */
  parse(payload: unknown): InboundMessage[];
  /** Status callbacks of messages we sent that the vendor later failed to deliver (messaging_a `statuses`). */
  parseFailures?(payload: unknown): Array<{ lookupKey: string | null; externalId: string; error: string }>;
  /** The sender's display name from the vendor's profile API, when the payload did not carry it. */
  profileName?(http: VendorHttp, source: AdapterSource, senderId: string): Promise<string | null>;
  sendText(http: VendorHttp, source: AdapterSource, to: string, text: string, idempotencyKey: string): Promise<{ externalId: string | null }>;
  sendMedia(http: VendorHttp, source: AdapterSource, to: string, media: { url: string; contentType: string; filename: string }): Promise<{ externalId: string | null }>;
  fetchMedia(http: VendorHttp, source: AdapterSource, media: MediaRef): Promise<FetchedMedia>;
  listTemplates?(http: VendorHttp, source: AdapterSource): Promise<TemplateInfo[]>;
  submitTemplate?(http: VendorHttp, source: AdapterSource, template: { name: string; language: string; category: string; components: unknown[] }): Promise<TemplateInfo>;
  sendTemplate?(http: VendorHttp, source: AdapterSource, to: string, template: TemplateSend): Promise<{ externalId: string | null }>;
}

/** The base URL of a source's vendor API, without a trailing slash. */
export const baseOf = (source: AdapterSource, fallback: string) => (source.config.api_base_url || fallback).replace(/\/+$/, '');

export const headerOf = (headers: IncomingHttpHeaders, name: string): string => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] ?? '' : value ?? '';
};

export const asObject = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {};
export const asArray = (value: unknown): unknown[] => Array.isArray(value) ? value : [];
export const asString = (value: unknown): string | null => typeof value === 'string' ? value : typeof value === 'number' ? String(value) : null;

/** Seconds (vendor epoch) or milliseconds to RFC 3339. */
export function epochToIso(value: unknown, unit: 's' | 'ms'): string | null {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) return null;
  const date = new Date(unit === 's' ? n * 1000 : n);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

export function extensionFor(contentType: string): string {
  const sub = contentType.split(';')[0]!.split('/')[1] ?? 'bin';
  return ({ jpeg: 'jpg', 'svg+xml': 'svg', mpeg: 'mp3', plain: 'txt', 'octet-stream': 'bin' } as Record<string, string>)[sub] ?? sub.replace(/[^a-z0-9]/g, '') ?? 'bin';
}
