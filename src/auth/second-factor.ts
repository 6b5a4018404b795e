import type { Ctx } from '../core/context.js';
import { UserRecord } from '../directory/models.js';
import type { UserRow } from '../directory/user-store.js';
import { acceptedTotpStep } from './totp.js';
import { consumeRecoveryCode } from './recovery-codes.js';

/**
 * Checks the second factor of an enrolled user and uses it up: a TOTP code (its time step is
 * stored, so neither it nor an older code works again) or one unused recovery code.
 * The conditional updates make a code single-use even under concurrent requests.
 */
export async function useSecondFactor(ctx: Ctx, user: UserRow, code: string): Promise<boolean> {
  const compact = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(compact)) return consumeRecoveryCode(ctx, user.id, compact);
  if (!user.two_factor_secret_enc) return false;
  const secret = ctx.deps.box.decrypt(user.two_factor_secret_enc);
  const step = await acceptedTotpStep(secret, compact, ctx.now, lastStepOf(user));
  if (step === null) return false;
  return claimTotpStep(ctx, user.id, step);
}

/** users.two_factor_last_step is a bigint, which pg hands over as a string. */
export function lastStepOf(user: Pick<UserRow, 'two_factor_last_step'>): number | null {
  return user.two_factor_last_step === null ? null : Number(user.two_factor_last_step);
}

/** Records `step` as the last accepted one unless an equal or later step was accepted meanwhile. */
export async function claimTotpStep(ctx: Ctx, userId: string, step: number): Promise<boolean> {
  const updated = await UserRecord.scoped(ctx)
    .where('id', userId)
    .where((q) => q.whereNull('two_factor_last_step').orWhere('two_factor_last_step', '<', step))
    .patch({ two_factor_last_step: step });
  return updated === 1;
}
