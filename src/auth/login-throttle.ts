import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { LoginAttemptRecord } from './models.js';
import { normaliseEmail } from '../directory/user-store.js';
import { verifyPassword } from './passwords.js';

/**
 * Brute-force protection per email address (CONTRACT §3): 10 failed sign-ins within 15 minutes
 * lock that address until enough failures leave the window. Counted in Postgres so every daemon
 * sees the same failures; keyed on the address as typed (lower-cased), known or not, so the lock
 * itself reveals nothing about which accounts exist.
 */
export const MAX_FAILURES = 10;
export const WINDOW_SECONDS = 15 * 60;

/** Refuses with 429 while the address is locked, even before the password is looked at. */
export async function assertNotThrottled(ctx: Ctx, email: string): Promise<void> {
  const windowStart = new Date(ctx.now.getTime() - WINDOW_SECONDS * 1000);
  const failures = await LoginAttemptRecord.scoped(ctx)
    .where({ email, succeeded: false })
    .where('created_at', '>', windowStart)
    .orderBy('created_at', 'desc')
    .limit(MAX_FAILURES)
    .select('created_at');
  if (failures.length < MAX_FAILURES) return;
  // The lock lifts when the 10th most recent failure (the oldest one that still counts) leaves the window.
  const liftsAt = failures[MAX_FAILURES - 1]!.created_at.getTime() + WINDOW_SECONDS * 1000;
  throw errors.rateLimited((liftsAt - ctx.now.getTime()) / 1000, 'Too many failed sign-in attempts for this account');
}

/**
 * Records one attempt. Requests refused by the lock are not recorded: they never tested a
 * password, and counting them would let an attacker extend the lock forever.
 */
export async function recordLoginAttempt(ctx: Ctx, email: string, succeeded: boolean): Promise<void> {
  await LoginAttemptRecord.insertIn(ctx, {
    email,
    ip: ctx.ip,
    succeeded,
    created_at: ctx.now,
  });
}

/**
 * Re-confirming a signed-in user's password (password change, disabling 2FA) shares the sign-in
 * throttle, so a stolen session is no way around it to guess the password. A failure is recorded
 * on the pool, outside the request's transaction, which the refusal rolls back.
 */
export async function verifyPasswordThrottled(
  ctx: Ctx,
  user: { email: string; password_hash: string | null },
  password: string,
): Promise<boolean> {
  const email = normaliseEmail(user.email);
  await assertNotThrottled(ctx, email);
  const ok = await verifyPassword(user.password_hash, password);
  if (!ok) await recordLoginAttempt({ ...ctx, trx: ctx.deps.db }, email, false);
  return ok;
}
