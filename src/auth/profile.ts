import { profileProblems } from '../directory/profile-rules.js';
import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { UserRecord } from '../directory/models.js';
import type { UserRow } from '../directory/user-store.js';
import { userOut } from '../directory/users.js';
import type { Static } from '@sinclair/typebox';
import { Profile, PROFILE_FIELDS } from './schemas.js';
import { diff, recordAudit } from '../audit/service.js';
import { currentUser } from './current-user.js';
import { forgetCredentialsOnCommit } from './credential-changes.js';
import { preferencesOf } from '../push/quiet-hours.js';
import type { NotificationPreferencesPatch } from '../push/schemas.js';

/** The caller's own profile (GET/PATCH /auth/me): the user record's profile fields. */
export type ProfileOut = Static<typeof Profile>;

/**
 * Profiles already built, per shared user row. `GET /auth/me` answers from the row the credential
 * cache keeps: frozen, and the same object on every request until the cache forgets it (a new row
 * is read after any change). Building the profile (twenty-odd fields, four timestamps formatted)
 * was an eighth of that request's CPU (docs/performance.md). Only frozen rows are kept, so a kept
 * profile can never go stale; a row read for one call is built from each time.
 */
const built = new WeakMap<UserRow, ProfileOut>();

export function profileOut(user: UserRow): ProfileOut {
  const kept = built.get(user);
  if (kept) return kept;
  const full = userOut(user);
  const picked = Object.fromEntries(PROFILE_FIELDS.map((field) => [field, full[field]]));
  const profile = { ...picked, notification_preferences: preferencesOf((user as { notification_preferences?: unknown }).notification_preferences) } as ProfileOut;
  // Shared between requests, so frozen too.
  if (Object.isFrozen(user)) built.set(user, Object.freeze(profile));
  return profile;
}

/**
 * `known` is the user row the bearer-token lookup already read (same statement that proved the
 * token valid and the user active), so the profile costs no second round trip.
 */
export async function getProfile(ctx: Ctx, known?: UserRow | null): Promise<ProfileOut> {
  return profileOut(known && known.id === ctx.actor.userId ? known : await currentUser(ctx));
}

/** Fields a user may change on themselves; absent means unchanged, null clears (except name). */
export interface ProfilePatch {
  name?: string;
  phone?: string | null;
  avatar_url?: string | null;
  timezone?: string | null;
  locale?: string | null;
  notification_preferences?: NotificationPreferencesPatch;
}

const EDITABLE = ['name', 'phone', 'avatar_url', 'timezone', 'locale'] as const;

export async function updateProfile(ctx: Ctx, patch: ProfilePatch): Promise<ProfileOut> {
  const problems = profileProblems(patch);
  if (problems.length) throw errors.validation(problems);
  const before = await currentUser(ctx);
  const changes: Partial<Record<(typeof EDITABLE)[number], string | null>> = {};
  for (const field of EDITABLE) {
    const value = patch[field];
    // Blank text clears a field like null does (a blank name was refused above).
    if (value !== undefined) changes[field] = value === null ? null : value.trim() || null;
  }
  const columns: Record<string, unknown> = { ...changes };
  // Notification preferences: a partial object changes only the keys it names.
  const current = preferencesOf((before as { notification_preferences?: unknown }).notification_preferences);
  if (patch.notification_preferences) columns.notification_preferences = preferencesOf({ ...current, ...patch.notification_preferences });
  const audited = diff({ ...before, notification_preferences: current } as Record<string, unknown>,
    { ...before, notification_preferences: current, ...columns }, [...EDITABLE, 'notification_preferences']);
  if (!Object.keys(audited).length) return profileOut(before);
  if (columns.notification_preferences) columns.notification_preferences = JSON.stringify(columns.notification_preferences);

  // GET /auth/me answers from the token's cached user row: the next one must show the change.
  forgetCredentialsOnCommit(ctx);
  const [after] = await UserRecord.scoped(ctx).where('id', before.id).patch({ ...columns, updated_at: ctx.now } as Partial<UserRow>).returning('*');
  await recordAudit(ctx, { action: 'user.updated', resourceType: 'user', resourceId: before.id, changes: audited });
  return profileOut(after!);
}
