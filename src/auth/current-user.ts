import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { findUser, type UserRow } from '../directory/user-store.js';

/** The user behind the request: a session's user, or the owner an API key acts for. */
export async function currentUser(ctx: Ctx): Promise<UserRow> {
  const user = ctx.actor.userId ? await findUser(ctx, ctx.actor.userId) : null;
  if (!user) throw errors.unauthenticated();
  return user;
}

/**
 * Passwords and 2FA guard the account itself; an API key is a delegated credential that may read
 * and edit the profile but must not replace the credentials it was derived from.
 */
export function assertInteractiveSession(ctx: Ctx): void {
  if (ctx.actor.type === 'api_key') throw errors.forbidden('API keys may not manage passwords or two-factor authentication; sign in instead');
}
