import { randomBytes } from 'node:crypto';
import type { SecretBox } from '../core/crypto.js';
import { hmacBase64url, safeEqual } from '../core/crypto.js';

/**
 * Stateless anti-CSRF tokens (CONTRACT §3): `<payload>.<hmac>`, where the payload binds the token
 * to one tenant and an expiry two hours out. Nothing is stored; any daemon sharing the secret key
 * verifies it.
 */
export const CSRF_TTL_SECONDS = 2 * 60 * 60;

export function issueCsrfToken(box: SecretBox, tenantId: string, now: Date): { token: string; expiresAt: Date } {
  const expiresAt = new Date(now.getTime() + CSRF_TTL_SECONDS * 1000);
  const payload = Buffer.from(
    JSON.stringify({ t: tenantId, e: Math.floor(expiresAt.getTime() / 1000), n: randomBytes(9).toString('base64url') }),
  ).toString('base64url');
  return { token: `${payload}.${hmacBase64url(box.derive('helpdesk:csrf'), payload)}`, expiresAt };
}

export function verifyCsrfToken(box: SecretBox, token: string | undefined, tenantId: string, now: Date): boolean {
  if (!token || token.length > 512) return false;
  const [payload, mac, extra] = token.split('.');
  if (!payload || !mac || extra !== undefined) return false;
  if (!safeEqual(mac, hmacBase64url(box.derive('helpdesk:csrf'), payload))) return false;
  try {
    const data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { t?: string; e?: number };
    return data.t === tenantId && typeof data.e === 'number' && data.e * 1000 > now.getTime();
  } catch {
    return false;
  }
}
