import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Secrets at rest (ARCHITECTURE rule 8): AES-256-GCM under a key derived from HELPDESK_SECRET_KEY.
 * Stored form: `v1.<iv>.<tag>.<ciphertext>` in base64url, so the format can evolve.
 */
export class SecretBox {
  private readonly encKey: Buffer;
  private readonly rootKey: Buffer;

  constructor(secretKey: string) {
    this.rootKey = createHash('sha256').update(secretKey, 'utf8').digest();
    this.encKey = this.derive('helpdesk:secrets-at-rest');
  }

  /** A sub-key for one purpose (CSRF tokens, signed challenges), so no key serves two uses. */
  derive(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.rootKey, Buffer.alloc(0), purpose, 32));
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.encKey, iv);
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  decrypt(stored: string): string {
    const [version, iv, tag, ct] = stored.split('.');
    if (version !== 'v1' || !iv || !tag || ct === undefined) throw new Error('Unknown secret format');
    const decipher = createDecipheriv('aes-256-gcm', this.encKey, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/** Tokens and keys are stored only as SHA-256 hashes (hex). */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

export function hmacBase64url(key: Buffer, value: string): string {
  return createHmac('sha256', key).update(value, 'utf8').digest('base64url');
}

/** Constant-time string comparison; different lengths compare false without early exit on content. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}
