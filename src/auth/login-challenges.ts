import type { Ctx } from '../core/context.js';
import { addSeconds } from '../core/clock.js';
import { sha256Hex } from '../core/crypto.js';
import { randomToken } from '../core/ids.js';
import { LoginChallengeRecord } from './models.js';

/**
 * The second step of a sign-in for users enrolled in 2FA: a challenge token handed out after the
 * password was right, valid 5 minutes, single use, and dead after 5 wrong codes. Stored as a hash.
 */
export const CHALLENGE_TTL_SECONDS = 5 * 60;
export const CHALLENGE_MAX_FAILURES = 5;

export interface ChallengeRow {
  id: string;
  user_id: string;
}

export async function createLoginChallenge(ctx: Ctx, userId: string): Promise<string> {
  const token = randomToken(32);
  await LoginChallengeRecord.insertIn(ctx, {
    user_id: userId,
    token_hash: sha256Hex(token),
    created_at: ctx.now,
    expires_at: addSeconds(ctx.now, CHALLENGE_TTL_SECONDS),
  });
  return token;
}

/** The challenge a token names, if it is still usable. */
export async function findLiveChallenge(ctx: Ctx, token: string): Promise<ChallengeRow | null> {
  const row = await LoginChallengeRecord.scoped(ctx)
    .where('token_hash', sha256Hex(token))
    .whereNull('used_at')
    .where('expires_at', '>', ctx.now)
    .where('failed_attempts', '<', CHALLENGE_MAX_FAILURES)
    .select('id', 'user_id')
    .first();
  return row ?? null;
}

/** Marks the challenge used; false when a concurrent request used it first. */
export async function claimChallenge(ctx: Ctx, challengeId: string): Promise<boolean> {
  return (await LoginChallengeRecord.scoped(ctx).where('id', challengeId).whereNull('used_at').patch({ used_at: ctx.now })) === 1;
}

export async function countChallengeFailure(ctx: Ctx, challengeId: string): Promise<void> {
  await LoginChallengeRecord.scoped(ctx).where('id', challengeId).increment('failed_attempts', 1);
}
