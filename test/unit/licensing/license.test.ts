import t from 'tap';
import { generateKeyPairSync, sign } from 'node:crypto';
import { AppError } from '../../../src/core/errors.js';
import { licensePublicKey, verifyLicense } from '../../../src/licensing/license.js';
import { licenseKeys, licensePayload, signLicense } from '../../helpers/license.js';

const now = new Date('2026-11-22T09:00:00.000Z');
const keys = licenseKeys();
const key = licensePublicKey(keys.publicKeyPem);

function refusal(fn: () => unknown): { field: string; message: string } {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError && error.code === 'validation_failed') return (error.details as Array<{ field: string; message: string }>)[0]!;
    throw error;
  }
  throw new Error('expected a refusal');
}

/** Signs an arbitrary first part, to reach the checks behind the signature. */
const signRaw = (body: string) => `${body}.${sign(null, Buffer.from(body, 'ascii'), keys.privateKey).toString('base64url')}`;

const payload = (overrides: Record<string, unknown> = {}) =>
  licensePayload({ issued_at: '2026-01-01T00:00:00Z', expires_at: '2027-01-01T00:00:00+01:00', seats: 25, ...overrides });

t.test('a well-signed licence verifies, timestamps normalised', async (t) => {
  const verified = verifyLicense(signLicense(keys.privateKey, payload({ modules: ['bi', 'bi', 'rbac'] })) + '\n', key, now);
  t.same(verified, {
    license_id: verified.license_id,
    customer: 'Example Corp',
    edition: 'enterprise',
    modules: ['bi', 'rbac'],
    seats: 25,
    issued_at: new Date('2026-01-01T00:00:00.000Z'),
    expires_at: new Date('2026-12-31T23:00:00.000Z'),
  });
  const perpetual = verifyLicense(signLicense(keys.privateKey, payload({ expires_at: null, seats: null })), key, now);
  t.equal(perpetual.expires_at, null);
  t.equal(perpetual.seats, null);
});

t.test('the raw 32-byte base64 key form is accepted', async (t) => {
  const raw = licensePublicKey(keys.publicKeyRaw);
  t.equal(verifyLicense(signLicense(keys.privateKey, payload()), raw, now).customer, 'Example Corp');
});

t.test('every defect is a 422 on the field license with its own reason', async (t) => {
  const good = signLicense(keys.privateKey, payload());
  const other = licenseKeys();
  const cases: Array<[string, () => unknown, RegExp]> = [
    ['no dot', () => verifyLicense('abc', key, now), /malformed/],
    ['three parts', () => verifyLicense(`${good}.x`, key, now), /malformed/],
    ['bad characters', () => verifyLicense('a+b.c/d', key, now), /malformed/],
    ['signed by another key', () => verifyLicense(signLicense(other.privateKey, payload()), key, now), /invalid signature/],
    ['payload altered', () => verifyLicense(`${Buffer.from(JSON.stringify(payload({ seats: 9999 }))).toString('base64url')}.${good.split('.')[1]}`, key, now), /invalid signature/],
    ['not JSON', () => verifyLicense(signRaw(Buffer.from('not json').toString('base64url')), key, now), /not valid JSON/],
    ['unknown edition', () => verifyLicense(signLicense(keys.privateKey, payload({ edition: 'platinum' })), key, now), /unknown edition "platinum"/],
    ['unknown module', () => verifyLicense(signLicense(keys.privateKey, payload({ modules: ['bi', 'teleport'] })), key, now), /unknown module "teleport"/],
    ['negative seats', () => verifyLicense(signLicense(keys.privateKey, payload({ seats: -1 })), key, now), /seats must be/],
    ['missing customer', () => verifyLicense(signLicense(keys.privateKey, payload({ customer: '' })), key, now), /customer must be a non-empty string/],
    ['bad issued_at', () => verifyLicense(signLicense(keys.privateKey, payload({ issued_at: 'yesterday' })), key, now), /issued_at must be an RFC 3339/],
    ['expired', () => verifyLicense(signLicense(keys.privateKey, payload({ expires_at: '2026-11-22T09:00:00Z' })), key, now), /has expired/],
    ['no key configured', () => licensePublicKey(null), /no licence public key is configured/],
    ['RSA key configured', () => licensePublicKey(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString()), /not an Ed25519 key/],
    ['raw key of the wrong length', () => licensePublicKey(Buffer.alloc(16).toString('base64')), /not an Ed25519 key/],
  ];
  for (const [name, fn, message] of cases) {
    const problem = refusal(fn);
    t.equal(problem.field, 'license', name);
    t.match(problem.message, message, name);
  }
  t.match(refusal(() => verifyLicense(signRaw(Buffer.from('[]').toString('base64url')), key, now)).message, /not a JSON object/);
});
