import type { Deps } from '../core/context.js';
import { errors } from '../core/errors.js';
import { hmacBase64url, safeEqual } from '../core/crypto.js';
import { blobStoreFor } from '../storage/store.js';

/**
 * Public media links for outbound channel messages (CONTRACT §17). Vendors fetch the media of a
 * reply from a URL, so each attachment sent gets `{site_url}/api/v1/media/<token>`: the token is
 * `<attachment id>.<tenant id>.<expiry, epoch seconds>.<HMAC-SHA256 of those>` under a key derived
 * from the daemon's secret key material. It is unguessable, bound to one attachment of one tenant
 * and valid for MEDIA_LINK_TTL_MS (24 hours, long enough for the vendors' own retries). A tampered,
 * unknown or expired token answers 404, like a missing file.
 */
export const MEDIA_LINK_TTL_MS = 24 * 3600 * 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KEY_INFO = 'helpdesk:channel-media-link';

const sign = (deps: Deps, payload: string) => hmacBase64url(deps.box.derive(KEY_INFO), payload);

export function mediaToken(deps: Deps, tenantId: string, attachmentId: string, now: Date): string {
  const expiry = Math.floor((now.getTime() + MEDIA_LINK_TTL_MS) / 1000);
  const payload = `${attachmentId}.${tenantId}.${expiry}`;
  return `${payload}.${sign(deps, payload)}`;
}

export const mediaUrl = (deps: Deps, token: string) => `${deps.config.siteUrl}/api/v1/media/${encodeURIComponent(token)}`;

interface AttachmentRow { id: string; tenant_id: string; filename: string; content_type: string; size: string | number; sha256: string; storage_key: string; message_id: string | null }

/** `GET /media/<token>`: the attachment the token names, if the signature holds and it has not expired. */
export async function openMediaByToken(deps: Deps, token: string, now: Date) {
  const parts = token.split('.');
  const notFound = errors.notFound('media', 'link');
  if (parts.length !== 4) throw notFound;
  const [attachmentId, tenantId, expiry, signature] = parts as [string, string, string, string];
  if (!safeEqual(sign(deps, `${attachmentId}.${tenantId}.${expiry}`), signature)) throw notFound;
  if (!UUID.test(attachmentId) || !UUID.test(tenantId)) throw notFound;
  if (!/^\d{1,12}$/.test(expiry) || Number(expiry) * 1000 < now.getTime()) throw notFound;
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
