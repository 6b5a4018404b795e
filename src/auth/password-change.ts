import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { UserRecord } from '../directory/models.js';
import { recordAudit } from '../audit/service.js';
import { hashPassword, passwordProblems } from './passwords.js';
import { verifyPasswordThrottled } from './login-throttle.js';
import { revokeUserSessions } from './sessions.js';
import { useUpUserTokens } from './user-tokens.js';
import { assertInteractiveSession, currentUser } from './current-user.js';

/**
 * A signed-in user changes their own password. Every other session ends (a stolen session must
 * not outlive the change); the caller's own session, if the caller is one, stays signed in.
 */
export interface PasswordChangeInput {
  currentPassword: string;
  newPassword: string;
}

export async function changePassword(ctx: Ctx, input: PasswordChangeInput): Promise<void> {
  assertInteractiveSession(ctx);
  const user = await currentUser(ctx);
  const problems: FieldProblem[] = [];
  if (!(await verifyPasswordThrottled(ctx, user, input.currentPassword))) {
    problems.push({ field: 'current_password', message: 'is incorrect' });
  }
  problems.push(...passwordProblems('new_password', input.newPassword));
  if (problems.length) throw errors.validation(problems);

  await UserRecord.scoped(ctx).where('id', user.id).patch({
    password_hash: await hashPassword(input.newPassword),
    password_changed_at: ctx.now,
    updated_at: ctx.now,
  });
  // A reset link mailed before the change would otherwise undo it.
  await useUpUserTokens(ctx, user.id);
  const revoked = await revokeUserSessions(ctx, user.id, ctx.actor.sessionId);
  await recordAudit(ctx, { action: 'user.password_changed', resourceType: 'user', resourceId: user.id, changes: { sessions_revoked: revoked } });
}
