import { generateSecret, generateURI, verify } from 'otplib';

/**
 * TOTP per RFC 6238 as CONTRACT §3 fixes it: SHA-1, 6 digits, 30-second steps, one step of clock
 * drift either way, and every code accepted once (the caller stores the accepted step and passes
 * it back as `lastStep`). Time comes from the caller, never from the wall clock.
 */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_ISSUER = 'Helpdesk';

export function newTotpSecret(): string {
  return generateSecret();
}

export function otpauthUri(secret: string, accountLabel: string): string {
  return generateURI({ issuer: TOTP_ISSUER, label: accountLabel, secret });
}

/** The time step a valid, not yet used code belongs to; null when the code is not acceptable. */
export async function acceptedTotpStep(secret: string, code: string, now: Date, lastStep: number | null): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const epoch = Math.floor(now.getTime() / 1000);
  const currentStep = Math.floor(epoch / TOTP_PERIOD_SECONDS);
  // Every step in the window is at most currentStep + 1; otplib throws on an afterTimeStep beyond it.
  if (lastStep !== null && lastStep >= currentStep + 1) return null;
  const result = await verify({
    secret,
    token: code,
    epoch,
    epochTolerance: TOTP_PERIOD_SECONDS,
    ...(lastStep !== null ? { afterTimeStep: lastStep } : {}),
  });
  // The union includes HOTP's result, which has no time step; a TOTP verification always has one.
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}
