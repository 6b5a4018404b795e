import type { SecretBox } from '../core/crypto.js';
import { hmacBase64url, safeEqual } from '../core/crypto.js';

/**
 * The inbound route's credential (CONTRACT §7): `mi_<tenant id>.<HMAC>` keyed with a sub-key of
 * the instance secret. It decides the tenant without a lookup table, cannot be guessed for another
 * tenant, and is shown in the tenant's mail settings. Changing HELPDESK_SECRET_KEY changes every
 * token (say so in docs/email.md).
 */
const PURPOSE = 'helpdesk:mail-inbound-token';
const TOKEN_RE = /^mi_([0-9a-f]{32})\.([A-Za-z0-9_-]{43})$/;

export function inboundTokenFor(box: SecretBox, tenantId: string): string {
  const compact = tenantId.replace(/-/g, '');
  return `mi_${compact}.${hmacBase64url(box.derive(PURPOSE), compact)}`;
}

/** The tenant a token names, or null when it is malformed or its HMAC does not match. */
export function tenantOfInboundToken(box: SecretBox, token: string): string | null {
  const match = TOKEN_RE.exec(token);
  if (!match) return null;
  const compact = match[1]!;
  if (!safeEqual(match[2]!, hmacBase64url(box.derive(PURPOSE), compact))) return null;
  return `${compact.slice(0, 8)}-${compact.slice(8, 12)}-${compact.slice(12, 16)}-${compact.slice(16, 20)}-${compact.slice(20)}`;
}
