import t from 'tap';
import { generate } from 'otplib';
import { acceptedTotpStep, newTotpSecret, otpauthUri } from '../../../src/auth/totp.js';
import { normaliseRecoveryCode } from '../../../src/auth/recovery-codes.js';

t.test('TOTP: RFC 6238 test vector, window and replay', async (t) => {
  // RFC 6238 appendix B, SHA-1 seed "12345678901234567890" (base32 below), T = 59 s: 94287082 -> 6 digits 287082.
  const rfcSecret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
  t.equal(await acceptedTotpStep(rfcSecret, '287082', new Date(59_000), null), 1);

  const secret = newTotpSecret();
  const now = new Date('2026-11-22T09:30:10.000Z');
  const step = Math.floor(now.getTime() / 30_000);
  const at = (offsetSeconds: number) => generate({ secret, epoch: Math.floor(now.getTime() / 1000) + offsetSeconds });

  t.equal(await acceptedTotpStep(secret, await at(0), now, null), step, 'current step');
  t.equal(await acceptedTotpStep(secret, await at(-30), now, null), step - 1, 'one step behind');
  t.equal(await acceptedTotpStep(secret, await at(30), now, null), step + 1, 'one step ahead');
  t.equal(await acceptedTotpStep(secret, await at(-90), now, null), null, 'three steps behind');
  t.equal(await acceptedTotpStep(secret, await at(90), now, null), null, 'three steps ahead');
  t.equal(await acceptedTotpStep(secret, await at(0), now, step), null, 'a used step is refused');
  t.equal(await acceptedTotpStep(secret, await at(-30), now, step), null, 'so is an older one');
  t.equal(await acceptedTotpStep(secret, await at(30), now, step), step + 1, 'a later one is accepted');
  t.equal(await acceptedTotpStep(secret, await at(0), now, step + 50), null, 'a last step in the future refuses, never throws');
  for (const bad of ['', '12345', '1234567', 'abcdef', '12 456']) t.equal(await acceptedTotpStep(secret, bad, now, null), null, `"${bad}"`);
});

t.test('otpauth URI and recovery code normalisation', async (t) => {
  t.equal(otpauthUri('JBSWY3DPEHPK3PXP', 'ana@example.com'), 'otpauth://totp/Helpdesk:ana%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Helpdesk');
  t.equal(normaliseRecoveryCode(' AB12C - 3DEF4 '), 'ab12c3def4');
});
