import type { QueryBuilder } from 'objection';
import type { Ctx } from '../core/context.js';
import { LoginAttemptRecord, LoginChallengeRecord, SessionRecord, UserTokenRecord } from './models.js';

/**
 * Housekeeping for one tenant, run by a scheduled job: drops credentials that can no longer be
 * used. Revoked and expired sessions stay a week (for "recent sessions" views and incident
 * review); spent tokens, challenges and login attempts a day (well past the 15-minute throttle).
 */
export interface PurgeCounts {
  sessions: number;
  user_tokens: number;
  login_challenges: number;
  login_attempts: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export async function purgeExpiredCredentials(ctx: Ctx): Promise<PurgeCounts> {
  const weekAgo = new Date(ctx.now.getTime() - 7 * DAY_MS);
  const dayAgo = new Date(ctx.now.getTime() - DAY_MS);
  const spentBefore = (cutoff: Date) => <M extends UserTokenRecord | LoginChallengeRecord>(q: QueryBuilder<M>) => q.where('expires_at', '<', cutoff).orWhere('used_at', '<', cutoff);
  return {
    sessions: await SessionRecord.scoped(ctx).where((q) => q.where('expires_at', '<', weekAgo).orWhere('revoked_at', '<', weekAgo)).delete(),
    user_tokens: await UserTokenRecord.scoped(ctx).where(spentBefore(dayAgo)).delete(),
    login_challenges: await LoginChallengeRecord.scoped(ctx).where(spentBefore(dayAgo)).delete(),
    login_attempts: await LoginAttemptRecord.scoped(ctx).where('created_at', '<', dayAgo).delete(),
  };
}
