import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { UserRecord } from '../directory/models.js';
import { findUser, findUserByEmail } from '../directory/user-store.js';
import { recordAudit } from '../audit/service.js';
import { hashPassword, passwordProblems } from './passwords.js';
import { revokeUserSessions } from './sessions.js';
import { findLiveUserToken, issueUserToken, RESET_TOKEN_TTL_SECONDS, useUpUserTokens } from './user-tokens.js';

/**
 * "Forgot password" and the reset link (CONTRACT §3). The request answers the same whether or not
 * the account exists; the mail goes out only after the token row has committed.
 */
export async function requestPasswordReset(ctx: Ctx, email: string): Promise<void> {
  const user = await findUserByEmail(ctx, email);
  if (!user?.active) return;
  const token = await issueUserToken(ctx, user.id, 'password_reset', RESET_TOKEN_TTL_SECONDS);
  const link = `${ctx.deps.config.siteUrl}/reset-password?token=${encodeURIComponent(token)}`;
  const mailer = ctx.deps.mailer;
  ctx.afterCommit(() => mailer.send({
    to: user.email,
    subject: 'Reset your Helpdesk password',
    text: [
      `Hello ${user.name},`,
      '',
      'Someone asked to reset the password of your Helpdesk account. To choose a new one, open:',
      link,
      '',
      `Or use this reset token: ${token}`,
      '',
      'The link works once and expires in one hour. If you did not ask for this, ignore this message.',
    ].join('\n'),
    html: [
      `<p>Hello ${escapeHtml(user.name)},</p>`,
      '<p>Someone asked to reset the password of your Helpdesk account.</p>',
      `<p><a href="${escapeHtml(link)}">Choose a new password</a></p>`,
      '<p>The link works once and expires in one hour. If you did not ask for this, ignore this message.</p>',
    ].join('\n'),
  }));
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface ResetPasswordInput {
  token: string;
  newPassword: string;
}

/** Sets a password from a reset or invitation token; every session of the user ends. */
export async function resetPassword(ctx: Ctx, input: ResetPasswordInput): Promise<void> {
  const row = await findLiveUserToken(ctx, input.token, ['password_reset', 'invite']);
  const owner = row ? await findUser(ctx, row.user_id) : null;
  const valid = row && owner?.active ? { purpose: row.purpose, user: owner } : null;
  const problems: FieldProblem[] = [];
  if (!valid) problems.push({ field: 'token', message: 'is invalid or expired' });
  problems.push(...passwordProblems('new_password', input.newPassword));
  if (!valid || problems.length) throw errors.validation(problems);

  const { user, purpose } = valid;
  await UserRecord.scoped(ctx).where('id', user.id).patch({
    password_hash: await hashPassword(input.newPassword),
    password_changed_at: ctx.now,
    updated_at: ctx.now,
  });
  await useUpUserTokens(ctx, user.id);
  await revokeUserSessions(ctx, user.id);
  await recordAudit(ctx, {
    action: 'user.password_reset',
    resourceType: 'user',
    resourceId: user.id,
    changes: { via: purpose },
    actor: { type: 'user', id: user.id, name: user.name },
  });
}
