import type { Ctx } from '../core/context.js';
import { errors, isAppError } from '../core/errors.js';
import { findUser, findUserByEmail, normaliseEmail, type UserRow } from '../directory/user-store.js';
import { verifyPassword } from './passwords.js';
import { assertNotThrottled, recordLoginAttempt } from './login-throttle.js';
import { claimChallenge, countChallengeFailure, createLoginChallenge, findLiveChallenge } from './login-challenges.js';
import { useSecondFactor } from './second-factor.js';
import { signIn, type LoginAnswer } from './sign-in.js';

/**
 * Password sign-in and its 2FA step (CONTRACT §3).
 *
 * Both run on a context WITHOUT a surrounding transaction (their routes say `transaction: false`):
 * a refused attempt must still leave its login_attempts row (and the challenge's failure count)
 * behind, which a transaction rolled back by the refusal would erase. The success path opens its
 * own transaction, so the session, last_login_at and audit row still commit together.
 */
export interface TwoFactorChallenge {
  two_factor_required: true;
  challenge_token: string;
}

export interface LoginInput {
  email: string;
  password: string;
  userAgent: string | null;
}

function atomically<T>(ctx: Ctx, fn: (ctx: Ctx) => Promise<T>): Promise<T> {
  return ctx.trx.transaction((trx) => fn({ ...ctx, trx }));
}

export async function login(ctx: Ctx, input: LoginInput): Promise<LoginAnswer | TwoFactorChallenge> {
  const email = normaliseEmail(input.email);
  await assertNotThrottled(ctx, email);
  const found = await findUserByEmail(ctx, email);
  const user = found?.active ? found : null;
  // verifyPassword spends the same time on a missing hash, so every refusal looks alike.
  const passwordOk = await verifyPassword(user?.password_hash, input.password);
  if (!user || !passwordOk) {
    await recordLoginAttempt(ctx, email, false);
    throw errors.invalidCredentials();
  }
  return atomically(ctx, async (tx) => {
    await recordLoginAttempt(tx, email, true);
    if (user.two_factor_enabled) {
      return { two_factor_required: true as const, challenge_token: await createLoginChallenge(tx, user.id) };
    }
    return signIn(tx, user, input.userAgent);
  });
}

export interface TwoFactorLoginInput {
  challengeToken: string;
  code: string;
  userAgent: string | null;
}

export async function completeTwoFactorLogin(ctx: Ctx, input: TwoFactorLoginInput): Promise<LoginAnswer> {
  const challenge = await findLiveChallenge(ctx, input.challengeToken);
  const user: UserRow | null = challenge ? await findUser(ctx, challenge.user_id) : null;
  if (!challenge || !user?.active || !user.two_factor_enabled) throw errors.invalidTwoFactorCode();
  const email = normaliseEmail(user.email);
  await assertNotThrottled(ctx, email);
  try {
    return await atomically(ctx, async (tx) => {
      if (!(await claimChallenge(tx, challenge.id)) || !(await useSecondFactor(tx, user, input.code))) {
        throw errors.invalidTwoFactorCode();
      }
      await recordLoginAttempt(tx, email, true);
      return signIn(tx, user, input.userAgent);
    });
  } catch (error) {
    if (isAppError(error) && error.code === 'invalid_two_factor_code') {
      // Outside the rolled-back transaction: these counts must survive the refusal.
      await countChallengeFailure(ctx, challenge.id);
      await recordLoginAttempt(ctx, email, false);
    }
    throw error;
  }
}
