import type { Knex } from 'knex';
import type { Ctx } from '../core/context.js';
import { scoped } from '../db/tenant-scope.js';

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
  const spentBefore = (cutoff: Date) => (q: Knex.QueryBuilder) => q.where('expires_at', '<', cutoff).orWhere('used_at', '<', cutoff);
  return {
    sessions: await scoped(ctx, 'sessions').where((q) => q.where('expires_at', '<', weekAgo).orWhere('revoked_at', '<', weekAgo)).del(),
    user_tokens: await scoped(ctx, 'user_tokens').where(spentBefore(dayAgo)).del(),
    login_challenges: await scoped(ctx, 'login_challenges').where(spentBefore(dayAgo)).del(),
    login_attempts: await scoped(ctx, 'login_attempts').where('created_at', '<', dayAgo).del(),
  };
}
