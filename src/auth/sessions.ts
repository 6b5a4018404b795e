import type { Ctx } from '../core/context.js';
import { addSeconds } from '../core/clock.js';
import { cleanText } from '../core/text.js';
import { SessionRecord } from './models.js';
import { newSessionToken, SESSION_TTL_SECONDS } from './tokens.js';
import { forgetCredentialsOnCommit } from './credential-changes.js';

/** Sessions: created at login (24 h), revoked at logout, password reset and deactivation. */
export interface IssuedSession {
  id: string;
  token: string;
  expiresAt: Date;
}

export async function createSession(ctx: Ctx, userId: string, meta: { userAgent?: string | null } = {}): Promise<IssuedSession> {
  const { token, hash } = newSessionToken();
  const expiresAt = addSeconds(ctx.now, SESSION_TTL_SECONDS);
  const { id } = await SessionRecord.insertIn(ctx, {
    user_id: userId,
    token_hash: hash,
    ip: ctx.ip,
    // Recorded as sent, less what PostgreSQL cannot store (a NUL would fail the sign-in).
    user_agent: meta.userAgent ? cleanText(meta.userAgent).slice(0, 500) : null,
    created_at: ctx.now,
    expires_at: expiresAt,
  });
  return { id, token, expiresAt };
}

/** Revocations take effect on this daemon's next request (the credential cache forgets at commit). */
export async function revokeSession(ctx: Ctx, sessionId: string): Promise<void> {
  forgetCredentialsOnCommit(ctx);
  await SessionRecord.scoped(ctx).where('id', sessionId).whereNull('revoked_at').patch({ revoked_at: ctx.now });
}

/** Revokes every live session of a user, optionally keeping one (the caller's own). */
export async function revokeUserSessions(ctx: Ctx, userId: string, keepSessionId?: string | null): Promise<number> {
  forgetCredentialsOnCommit(ctx);
  const query = SessionRecord.scoped(ctx).where('user_id', userId).whereNull('revoked_at');
  if (keepSessionId) query.whereNot('id', keepSessionId);
  return query.patch({ revoked_at: ctx.now });
}

/** Logout: ends the caller's own session if the request carried one; nothing else to do otherwise. */
export async function endCurrentSession(ctx: Ctx): Promise<void> {
  if (ctx.actor.type === 'user' && ctx.actor.sessionId) await revokeSession(ctx, ctx.actor.sessionId);
}
