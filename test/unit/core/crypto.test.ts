import t from 'tap';
import { SecretBox, safeEqual, sha256Hex } from '../../../src/core/crypto.js';

t.test('SecretBox encrypts with AES-256-GCM and detects tampering', async (t) => {
  const box = new SecretBox('key one');
  const stored = box.encrypt('otp-secret-JBSWY3DP');
  t.match(stored, /^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
  t.notMatch(stored, /JBSWY3DP/, 'plaintext is not visible');
  t.equal(box.decrypt(stored), 'otp-secret-JBSWY3DP');
  t.not(box.encrypt('same'), box.encrypt('same'), 'a fresh IV each time');
  const [v, iv, tag, ct] = stored.split('.');
  const flipped = Buffer.from(ct!, 'base64url');
  flipped[0] = flipped[0]! ^ 1;
  t.throws(() => box.decrypt([v, iv, tag, flipped.toString('base64url')].join('.')), 'tampered ciphertext is refused');
  t.throws(() => new SecretBox('another key').decrypt(stored), 'another key cannot decrypt');
  t.throws(() => box.decrypt('v2.a.b.c'), /Unknown secret format/);
});

t.test('derived keys differ by purpose', async (t) => {
  const box = new SecretBox('k');
  t.notSame(box.derive('a'), box.derive('b'));
  t.same(box.derive('a'), new SecretBox('k').derive('a'));
});

t.test('safeEqual and sha256Hex', async (t) => {
  t.ok(safeEqual('abc', 'abc'));
  t.notOk(safeEqual('abc', 'abd'));
  t.notOk(safeEqual('abc', 'abcd'));
  t.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});
