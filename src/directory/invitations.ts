import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { addSeconds, toRfc3339 } from '../core/clock.js';
import { UserRecord } from './models.js';
import { issueUserToken, useUpUserTokens } from '../auth/user-tokens.js';
import { recordAudit } from '../audit/service.js';
import { loadUser } from './users.js';
import type { Invitation } from './user-schemas.js';

/**
 * Invitations: a single-use token (purpose 'invite', valid 7 days) mailed to the user, who sets a
 * password with it through POST /auth/reset-password. Re-inviting voids the earlier links, so only
 * the newest mail works.
 */
export const INVITE_TTL_SECONDS = 7 * 24 * 60 * 60;

export async function inviteUser(ctx: Ctx, id: string): Promise<Invitation> {
  const user = await loadUser(ctx, id);
  if (!user.active) throw errors.conflict('Cannot invite a deactivated user; reactivate them first');

  await useUpUserTokens(ctx, id, ['invite']);
  const token = await issueUserToken(ctx, id, 'invite', INVITE_TTL_SECONDS);
  const expiresAt = addSeconds(ctx.now, INVITE_TTL_SECONDS);
  await UserRecord.scoped(ctx).where('id', id).patch({ invited_at: ctx.now, updated_at: ctx.now });
  await recordAudit(ctx, { action: 'user.invited', resourceType: 'user', resourceId: id, changes: { email: user.email, expires_at: toRfc3339(expiresAt) } });

  const tenant = (await ctx.trx('tenants').where({ id: ctx.tenantId }).first('name')) as { name: string };
  const link = `${ctx.deps.config.siteUrl}/accept-invite?token=${token}`;
  const { mailer } = ctx.deps;
  ctx.afterCommit(() =>
    mailer.send({
      to: user.email,
      subject: `You are invited to ${tenant.name}`,
      text: [
        `Hello ${user.name},`,
        '',
        `You have been invited to the ${tenant.name} helpdesk. Choose your password here:`,
        link,
        '',
        `The link works once and expires on ${expiresAt.toISOString()}.`,
      ].join('\n'),
    }),
  );
  return { user_id: id, invited_at: toRfc3339(ctx.now)!, expires_at: toRfc3339(expiresAt)! };
}
