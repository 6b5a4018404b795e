import type { Ctx } from '../core/context.js';
import { addSeconds } from '../core/clock.js';
import { sha256Hex } from '../core/crypto.js';
import { randomToken } from '../core/ids.js';
import { UserTokenRecord } from './models.js';

/**
 * Single-use tokens mailed to a user (password resets; invitations are issued by the users area
 * with purpose 'invite'). Only the SHA-256 hash is stored; the raw token exists in the mail only.
 */
export type UserTokenPurpose = 'password_reset' | 'invite';

export const RESET_TOKEN_TTL_SECONDS = 60 * 60;

export interface UserTokenRow {
  id: string;
  user_id: string;
  purpose: UserTokenPurpose;
}

export async function issueUserToken(ctx: Ctx, userId: string, purpose: UserTokenPurpose, ttlSeconds: number): Promise<string> {
  const token = randomToken(32);
  await UserTokenRecord.insertIn(ctx, {
    user_id: userId,
    purpose,
    token_hash: sha256Hex(token),
    created_at: ctx.now,
    expires_at: addSeconds(ctx.now, ttlSeconds),
  });
  return token;
}

/** The unused, unexpired token of one of `purposes`, locked until the transaction ends. */
export async function findLiveUserToken(ctx: Ctx, token: string, purposes: UserTokenPurpose[]): Promise<UserTokenRow | null> {
  const row = await UserTokenRecord.scoped(ctx)
    .where('token_hash', sha256Hex(token))
    .whereIn('purpose', purposes)
    .whereNull('used_at')
    .where('expires_at', '>', ctx.now)
    .forUpdate()
    .select('id', 'user_id', 'purpose')
    .first();
  return row ?? null;
}

/**
 * Marks the user's unused tokens used: a new password makes older links worthless (every purpose),
 * a new invitation the older invitations (`purposes: ['invite']`).
 */
export async function useUpUserTokens(ctx: Ctx, userId: string, purposes?: UserTokenPurpose[]): Promise<void> {
  const query = UserTokenRecord.scoped(ctx).where('user_id', userId).whereNull('used_at');
  if (purposes) query.whereIn('purpose', purposes);
  await query.patch({ used_at: ctx.now });
}
