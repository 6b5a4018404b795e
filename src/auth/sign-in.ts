import type { Ctx } from '../core/context.js';
import { toRfc3339 } from '../core/clock.js';
import { UserRecord } from '../directory/models.js';
import type { UserRow } from '../directory/user-store.js';
import { recordAudit } from '../audit/service.js';
import { createSession } from './sessions.js';
import { forgetCredentialsOnCommit } from './credential-changes.js';

/** The login answer of CONTRACT §3, shared by password login, the 2FA step and registration. */
export interface LoginAnswer {
  token: string;
  token_type: 'Bearer';
  expires_at: string;
  user: { id: string; email: string; name: string; role: string };
}

/** Opens a 24-hour session for a user whose credentials were checked, and audits the sign-in. */
export async function signIn(ctx: Ctx, user: UserRow, userAgent: string | null): Promise<LoginAnswer> {
  const session = await createSession(ctx, user.id, { userAgent });
  // last_login_at is in the profile GET /auth/me answers from the user's other, cached tokens.
  forgetCredentialsOnCommit(ctx);
  await UserRecord.scoped(ctx).where('id', user.id).patch({ last_login_at: ctx.now });
  await recordAudit(ctx, {
    action: 'user.login',
    resourceType: 'user',
    resourceId: user.id,
    changes: { session_id: session.id },
    actor: { type: 'user', id: user.id, name: user.name },
  });
  return {
    token: session.token,
    token_type: 'Bearer',
    expires_at: toRfc3339(session.expiresAt)!,
    user: { id: user.id, email: user.email, name: user.name, role: user.role },
  };
}
