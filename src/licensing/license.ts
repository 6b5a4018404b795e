import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { errors } from '../core/errors.js';
import { parseRfc3339 } from '../core/clock.js';

/**
 * The licence format (CONTRACT §8): `base64url(JSON payload) + "." + base64url(Ed25519 signature
 * of the first part's ASCII)`. Verification is pure: text, trusted key and time in; the checked
 * payload out, or a 422 on the field `license` whose message says exactly what is wrong.
 */

/** The optional modules a licence may grant, and the editions. */
export const MODULES = ['meetings', 'bi', 'rbac', 'archiver'] as const;
export type Edition = 'community' | 'enterprise';

/** A licence's checked payload. */
export interface LicensePayload {
  license_id: string;
  customer: string;
  edition: Edition;
  modules: string[];
  /** Agent seats; null = unlimited. */
  seats: number | null;
  issued_at: Date;
  /** null = perpetual. */
  expires_at: Date | null;
}

const EDITIONS: readonly string[] = ['community', 'enterprise'];
const BASE64URL = /^[A-Za-z0-9_-]+$/;
// SPKI DER header of an Ed25519 public key; the raw 32-byte key follows it.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

const refuse = (message: string) => errors.validation([{ field: 'license', message }]);

/** The trusted key from HELPDESK_LICENSE_PUBLIC_KEY: PEM SPKI, or base64 of the raw 32 bytes. */
export function licensePublicKey(configured: string | null): KeyObject {
  if (!configured) throw refuse('cannot be verified: no licence public key is configured (HELPDESK_LICENSE_PUBLIC_KEY)');
  try {
    const key = configured.includes('-----BEGIN')
      ? createPublicKey(configured)
      : createPublicKey({ key: rawKeyToSpki(configured), format: 'der', type: 'spki' });
    if (key.asymmetricKeyType !== 'ed25519') throw new Error('not Ed25519');
    return key;
  } catch {
    throw refuse('cannot be verified: the configured licence public key is not an Ed25519 key');
  }
}

function rawKeyToSpki(base64: string): Buffer {
  const raw = Buffer.from(base64.trim(), 'base64');
  if (raw.length !== 32) throw new Error('raw Ed25519 keys are 32 bytes');
  return Buffer.concat([ED25519_SPKI_PREFIX, raw]);
}

export function verifyLicense(text: string, key: KeyObject, now: Date): LicensePayload {
  const parts = text.trim().split('.');
  if (parts.length !== 2 || !BASE64URL.test(parts[0]!) || !BASE64URL.test(parts[1]!)) {
    throw refuse('is malformed: expected base64url(payload).base64url(signature)');
  }
  const [body, signature] = parts as [string, string];
  if (!verify(null, Buffer.from(body, 'ascii'), key, Buffer.from(signature, 'base64url'))) {
    throw refuse('has an invalid signature');
  }
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw refuse('payload is not valid JSON');
  }
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) throw refuse('payload is not a JSON object');
  return checkPayload(payload, now);
}

function checkPayload(p: Record<string, unknown>, now: Date): LicensePayload {
  const text = (name: string): string => {
    const value = p[name];
    if (typeof value !== 'string' || !value.trim()) throw refuse(`payload field ${name} must be a non-empty string`);
    return value.trim();
  };
  const time = (name: string, optional: boolean): Date | null => {
    const value = p[name];
    if (optional && (value === null || value === undefined)) return null;
    const date = typeof value === 'string' ? parseRfc3339(value) : null;
    if (!date) throw refuse(`payload field ${name} must be an RFC 3339 timestamp`);
    return date;
  };

  const licenseId = text('license_id');
  const customer = text('customer');
  if (typeof p.edition !== 'string' || !EDITIONS.includes(p.edition)) {
    throw refuse(`has an unknown edition ${JSON.stringify(p.edition ?? null)}; expected community or enterprise`);
  }
  const modules = p.modules ?? [];
  if (!Array.isArray(modules) || modules.some((m) => typeof m !== 'string')) throw refuse('payload field modules must be an array of strings');
  const unknown = modules.find((m: string) => !(MODULES as readonly string[]).includes(m));
  if (unknown !== undefined) throw refuse(`has an unknown module ${JSON.stringify(unknown)}; known modules: ${MODULES.join(', ')}`);
  const seats = p.seats ?? null;
  if (seats !== null && (typeof seats !== 'number' || !Number.isInteger(seats) || seats < 0 || seats > 2_147_483_647)) {
    throw refuse('payload field seats must be a non-negative integer or null');
  }
  const issuedAt = time('issued_at', false)!;
  const expiresAt = time('expires_at', true);
  if (expiresAt && expiresAt <= now) throw refuse(`has expired (expires_at ${expiresAt.toISOString()})`);
  return {
    license_id: licenseId,
    customer,
    edition: p.edition as Edition,
    modules: [...new Set(modules as string[])],
    seats,
    issued_at: issuedAt,
    expires_at: expiresAt,
  };
}
