import { createHmac, randomBytes } from 'node:crypto';

/**
 * Endpoint secrets and signatures (CONTRACT §5–6). A secret is `whsec_` + 64 hex characters; the
 * HMAC key is that whole string as UTF-8, exactly as the user was shown it, so receivers need no
 * decoding step.
 */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('hex')}`;
}

/** What later reads show: `whsec_********` + the last four characters. */
export function maskSecret(last4: string): string {
  return `whsec_********${last4}`;
}

/** The X-Helpdesk-Signature value of a raw body. */
export function signBody(secret: string, rawBody: string | Buffer): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(rawBody).digest('hex')}`;
}
