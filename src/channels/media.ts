import type { Deps } from '../core/context.js';
import { errors } from '../core/errors.js';
import { hmacBase64url, safeEqual } from '../core/crypto.js';
import { blobStoreFor } from '../storage/store.js';

/**
 * Public media links for outbound channel messages (CONTRACT §17). Vendors fetch the media of a
 * reply from a URL, so each attachment sent gets `{site_url}/api/v1/media/<token>`: the token is
 * the base64url of the attachment id, the tenant id and the expiry (epoch seconds), then 128 bits
 * of their HMAC-SHA256 under a key derived from the daemon's secret key material (70 characters). It is unguessable, bound to one attachment of one tenant
 * and valid for MEDIA_LINK_TTL_MS (24 hours, long enough for the vendors' own retries). A tampered,
 * unknown or expired token answers 404, like a missing file.
 */
export const MEDIA_LINK_TTL_MS = 24 * 3600 * 1000;
const KEY_INFO = 'helpdesk:channel-media-link';

const sign = (deps: Deps, payload: Buffer) => hmacBase64url(deps.box.derive(KEY_INFO), payload.toString('base64url')).slice(0, 22);
const uuidBytes = (id: string) => Buffer.from(id.replace(/-/g, ''), 'hex');
const uuidOf = (bytes: Buffer) => bytes.toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');

/** The token: base64url of attachment id (16 bytes), tenant id (16), expiry (uint32 epoch seconds) and 128 bits of the HMAC. */
export function mediaToken(deps: Deps, tenantId: string, attachmentId: string, now: Date): string {
  const payload = Buffer.alloc(36);
  uuidBytes(attachmentId).copy(payload, 0);
  uuidBytes(tenantId).copy(payload, 16);
  payload.writeUInt32BE(Math.floor((now.getTime() + MEDIA_LINK_TTL_MS) / 1000), 32);
  return `${payload.toString('base64url')}${sign(deps, payload)}`;
}

export const mediaUrl = (deps: Deps, token: string) => `${deps.config.siteUrl}/api/v1/media/${encodeURIComponent(token)}`;

interface AttachmentRow { id: string; tenant_id: string; filename: string; content_type: string; size: string | number; sha256: string; storage_key: string; message_id: string | null }

/** `GET /media/<token>`: the attachment the token names, if the signature holds and it has not expired. */
export async function openMediaByToken(deps: Deps, token: string, now: Date) {
  const notFound = errors.notFound('media', 'link');
  if (!/^[A-Za-z0-9_-]{70}$/.test(token)) throw notFound;
  const payload = Buffer.from(token.slice(0, 48), 'base64url');
  if (payload.length !== 36 || !safeEqual(sign(deps, payload), token.slice(48))) throw notFound;
  if (payload.readUInt32BE(32) * 1000 < now.getTime()) throw notFound;
  const attachmentId = uuidOf(payload.subarray(0, 16));
  const tenantId = uuidOf(payload.subarray(16, 32));
  const row = await deps.db('attachments').where({ tenant_id: tenantId, id: attachmentId }).first() as AttachmentRow | undefined;
  if (!row || !row.message_id) throw notFound;
  const message = await deps.db('messages').where({ tenant_id: tenantId, id: row.message_id }).first() as { is_private: boolean } | undefined;
  if (!message || message.is_private) throw notFound;
  const store = blobStoreFor(deps.config);
  return {
    filename: row.filename,
    content_type: row.content_type,
    size: Number(row.size),
    sha256: row.sha256,
    open: (range?: { start: number; end: number }) => store.get(row.storage_key, range),
  };
}
