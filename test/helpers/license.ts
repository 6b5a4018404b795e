import { uuidv7 } from '../../src/core/ids.js';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { CLI_ACTOR } from '../../src/core/context.js';
import { inTransaction } from '../../src/db/transaction.js';
import { applyLicense } from '../../src/licensing/service.js';
import type { TestEnv } from './app.js';

/**
 * Licences for tests: a fresh Ed25519 key pair (pass `publicKeyPem` as the app's
 * `licensePublicKey`), a signer producing the CONTRACT §8 format, and a one-call installer.
 */
export interface LicenseKeys {
  publicKeyPem: string;
  /** The raw 32-byte public key, base64: the other accepted form of HELPDESK_LICENSE_PUBLIC_KEY. */
  publicKeyRaw: string;
  privateKey: KeyObject;
}

export function licenseKeys(): LicenseKeys {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return {
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    publicKeyRaw: der.subarray(der.length - 32).toString('base64'),
    privateKey,
  };
}

export function signLicense(privateKey: KeyObject, payload: Record<string, unknown>): string {
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${body}.${sign(null, Buffer.from(body, 'ascii'), privateKey).toString('base64url')}`;
}

/** A valid Enterprise payload with every module, unlimited seats, valid for a year. */
export function licensePayload(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Date.now();
  return {
    license_id: `lic-${now.toString(36)}`,
    customer: 'Example Corp',
    edition: 'enterprise',
    modules: ['meetings', 'bi', 'rbac', 'archiver'],
    seats: null,
    issued_at: new Date(now - 86_400_000).toISOString(),
    expires_at: new Date(now + 365 * 86_400_000).toISOString(),
    ...overrides,
  };
}

/** Signs and installs a licence for the tenant through the service (the app must trust `keys`). */
export async function grantLicense(env: TestEnv, tenantId: string, keys: LicenseKeys, overrides: Record<string, unknown> = {}): Promise<string> {
  const text = signLicense(keys.privateKey, licensePayload(overrides));
  await inTransaction(env.deps, { tenantId, actor: CLI_ACTOR, now: new Date() }, (ctx) => applyLicense(ctx, text));
  return text;
}

/**
 * Stores a licence row as if it had been installed earlier, bypassing verification: the way to
 * have a licence that has expired since (applyLicense rightly refuses to install an expired one).
 */
export async function storeLicenseRow(env: TestEnv, tenantId: string, fields: Record<string, unknown>): Promise<void> {
  const now = new Date();
  await env.deps.db('licenses').insert({
    tenant_id: tenantId, id: uuidv7(), license_id: 'stored', customer: 'Stored licence', edition: 'enterprise', modules: [],
    seats: null, issued_at: new Date(now.getTime() - 86_400_000), expires_at: null, raw: 'stored', installed_at: now,
    ...fields,
  });
}
