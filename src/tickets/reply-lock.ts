import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { addSeconds, toRfc3339 } from '../core/clock.js';
import { scoped } from '../db/tenant-scope.js';
import { actingUserId, actsAsAdmin, loadTicket, usersById } from './ops-access.js';
import type { ReplyLock } from './ops-schemas.js';

/**
 * The composer lock (CONTRACT §5, SPEC "Reply lock"): while an agent writes a reply, others see
 * who does and are refused the lock. States: free (no row, or the row's time has passed) → held by
 * one agent for 120 s from their last POST (re-POST extends) → free again on DELETE by the holder
 * or an admin, or on expiry. Time is ctx.now throughout, so an expired lock is free without any
 * clean-up job. The lock is advisory: it does not block posting messages.
 */
export const REPLY_LOCK_SECONDS = 120;

interface LockRow { ticket_id: string; user_id: string; acquired_at: Date; expires_at: Date }

async function lockOut(ctx: Ctx, row: LockRow): Promise<ReplyLock> {
  const holder = (await usersById(ctx, [row.user_id])).get(row.user_id);
  return { ticket_id: row.ticket_id, locked_by: { id: row.user_id, name: holder?.name ?? '' }, expires_at: toRfc3339(row.expires_at)! };
}

/** Acquires the lock, or extends it for its holder; 409 reply_locked while another agent holds it. */
export async function acquireReplyLock(ctx: Ctx, id: string): Promise<ReplyLock> {
  const userId = actingUserId(ctx);
  await loadTicket(ctx, id);
  const expiresAt = addSeconds(ctx.now, REPLY_LOCK_SECONDS);
  // One statement: insert, or take over the row when it is ours or has expired. Concurrent
  // acquirers serialise on the row; the loser's conditional update touches nothing.
  const [row] = await ctx.trx('reply_locks')
    .insert({ tenant_id: ctx.tenantId, ticket_id: id, user_id: userId, acquired_at: ctx.now, expires_at: expiresAt })
    .onConflict(['tenant_id', 'ticket_id'])
    .merge({
      user_id: userId,
      expires_at: expiresAt,
      acquired_at: ctx.trx.raw('case when reply_locks.user_id = ? and reply_locks.expires_at > ? then reply_locks.acquired_at else excluded.acquired_at end', [userId, ctx.now]),
    })
    .where((w) => w.where('reply_locks.user_id', userId).orWhere('reply_locks.expires_at', '<=', ctx.now))
    .returning('*') as LockRow[];
  if (row) return lockOut(ctx, row);
  const held = await scoped<LockRow>(ctx, 'reply_locks').where('ticket_id', id).first();
  const out = await lockOut(ctx, held!);
  throw errors.replyLocked(out.locked_by, out.expires_at);
}

/** Releases the lock: the holder or an admin; nothing to release (free or expired) is fine too. */
export async function releaseReplyLock(ctx: Ctx, id: string): Promise<void> {
  await loadTicket(ctx, id);
  const held = await scoped<LockRow>(ctx, 'reply_locks').where('ticket_id', id).where('expires_at', '>', ctx.now).forUpdate().first();
  if (held && held.user_id !== ctx.actor.userId && !actsAsAdmin(ctx.actor)) {
    const out = await lockOut(ctx, held);
    throw errors.replyLocked(out.locked_by, out.expires_at);
  }
  await scoped(ctx, 'reply_locks').where('ticket_id', id).delete();
}

/** The current holder, or null when the lock is free (for the conversation's reply path). */
export async function currentReplyLock(ctx: Ctx, id: string): Promise<ReplyLock | null> {
  const held = await scoped<LockRow>(ctx, 'reply_locks').where('ticket_id', id).where('expires_at', '>', ctx.now).first();
  return held ? lockOut(ctx, held) : null;
}
