import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { UserRecord } from '../directory/models.js';
import { recordAudit } from '../audit/service.js';
import { verifyPasswordThrottled } from './login-throttle.js';
import { assertInteractiveSession, currentUser } from './current-user.js';
import { forgetCredentialsOnCommit } from './credential-changes.js';
import { acceptedTotpStep, newTotpSecret, otpauthUri } from './totp.js';
import { lastStepOf } from './second-factor.js';
import { deleteRecoveryCodes, replaceRecoveryCodes } from './recovery-codes.js';

/**
 * Enrolment in TOTP two-factor authentication (CONTRACT §3): setup stores a pending secret
 * (encrypted), confirm proves the authenticator has it and switches 2FA on with ten recovery
 * codes, disable needs the password. Only a signed-in session may do any of it.
 */
export async function twoFactorStatus(ctx: Ctx): Promise<{ enabled: boolean }> {
  assertInteractiveSession(ctx);
  return { enabled: (await currentUser(ctx)).two_factor_enabled };
}

/** Starts (or restarts) enrolment with a fresh secret; the previous pending one is discarded. */
export async function setupTwoFactor(ctx: Ctx): Promise<{ secret: string; otpauth_uri: string }> {
  assertInteractiveSession(ctx);
  const user = await currentUser(ctx);
  if (user.two_factor_enabled) throw errors.conflict('Two-factor authentication is already enabled; disable it first to enrol again');
  const secret = newTotpSecret();
  await UserRecord.scoped(ctx).where('id', user.id).patch({
    two_factor_pending_secret_enc: ctx.deps.box.encrypt(secret),
    updated_at: ctx.now,
  });
  return { secret, otpauth_uri: otpauthUri(secret, user.email) };
}

export async function confirmTwoFactor(ctx: Ctx, code: string): Promise<{ enabled: true; recovery_codes: string[] }> {
  assertInteractiveSession(ctx);
  const user = await currentUser(ctx);
  if (user.two_factor_enabled) throw errors.conflict('Two-factor authentication is already enabled');
  if (!user.two_factor_pending_secret_enc) throw errors.conflict('No two-factor setup is pending; call POST /2fa/setup first');
  const secret = ctx.deps.box.decrypt(user.two_factor_pending_secret_enc);
  const step = await acceptedTotpStep(secret, code.replace(/\s/g, ''), ctx.now, lastStepOf(user));
  if (step === null) throw errors.invalidTwoFactorCode('The code does not match the pending two-factor secret');

  // two_factor_enabled is part of the profile GET /auth/me answers from the token's cached row.
  forgetCredentialsOnCommit(ctx);
  await UserRecord.scoped(ctx).where('id', user.id).patch({
    two_factor_enabled: true,
    two_factor_secret_enc: user.two_factor_pending_secret_enc,
    two_factor_pending_secret_enc: null,
    // The confirming code is spent: it cannot also complete a sign-in.
    two_factor_last_step: step,
    updated_at: ctx.now,
  });
  const recoveryCodes = await replaceRecoveryCodes(ctx, user.id);
  await recordAudit(ctx, { action: 'user.two_factor_enabled', resourceType: 'user', resourceId: user.id });
  return { enabled: true, recovery_codes: recoveryCodes };
}

/** Switches 2FA off (or abandons a pending setup); idempotent once the password is right. */
export async function disableTwoFactor(ctx: Ctx, password: string): Promise<{ enabled: false }> {
  assertInteractiveSession(ctx);
  const user = await currentUser(ctx);
  if (!(await verifyPasswordThrottled(ctx, user, password))) throw errors.invalid('password', 'is incorrect');
  forgetCredentialsOnCommit(ctx);
  await UserRecord.scoped(ctx).where('id', user.id).patch({
    two_factor_enabled: false,
    two_factor_secret_enc: null,
    two_factor_pending_secret_enc: null,
    two_factor_last_step: null,
    updated_at: ctx.now,
  });
  await deleteRecoveryCodes(ctx, user.id);
  if (user.two_factor_enabled) {
    await recordAudit(ctx, { action: 'user.two_factor_disabled', resourceType: 'user', resourceId: user.id });
  }
  return { enabled: false };
}
