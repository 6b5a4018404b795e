import { createHmac, timingSafeEqual } from 'node:crypto';

/** Constant-time comparison of two byte strings (false on different lengths, without early exit). */
export function sameBytes(a: Buffer, b: Buffer): boolean {
  if (a.length !== b.length) {
    timingSafeEqual(a, a);
    return false;
  }
  return timingSafeEqual(a, b);
}

export const hmacSha256 = (secret: string, body: Buffer) => createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest();

/** `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(app_secret, raw body)>` (WhatsApp, Messenger, Instagram). */
export function verifyHubSignature(appSecret: string | undefined, header: string, body: Buffer): boolean {
  if (!appSecret || !header.startsWith('sha256=')) return false;
  const hex = header.slice('sha256='.length).trim().toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hex)) return false;
  return sameBytes(Buffer.from(hex, 'hex'), hmacSha256(appSecret, body));
}
