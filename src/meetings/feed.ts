import type { Ctx, Deps } from '../core/context.js';
import { SYSTEM_ACTOR } from '../core/context.js';
import { sha256Hex } from '../core/crypto.js';
import { errors } from '../core/errors.js';
import { randomToken } from '../core/ids.js';
import { inTransaction } from '../db/transaction.js';
import { scoped } from '../db/tenant-scope.js';
import { recordAudit } from '../audit/service.js';
import { requireFeature } from '../licensing/features.js';
import { loadMailSettings } from '../mail/settings-store.js';
import { ownAddressOf } from '../mail/transports.js';
import { Meeting } from './models.js';
import { addEvent, newCalendar } from './invitations.js';
import { attendeesOf } from './service.js';
import type { FeedToken } from './schemas.js';

/**
 * Personal calendar feeds (SPEC "Meeting rules" 5): a secret address per user, stored only as its
 * hash; regenerating it invalidates the old address at once. The feed holds the user's active
 * meetings (organised or attended) in a window of ±180 days around now; a series is one VEVENT
 * with its RRULE, so the subscribing client expands it (DST-correct, the event names its zone).
 */
export const FEED_WINDOW_DAYS = 180;
const TOKEN_PREFIX = 'hdcal_';

export const feedUrl = (deps: Deps, token: string) => `${deps.config.siteUrl}/meetings/feed/${token}.ics`;

export async function regenerateFeedToken(ctx: Ctx): Promise<FeedToken> {
  await requireFeature(ctx, 'meetings');
  if (!ctx.actor.userId) throw errors.forbidden('A calendar feed belongs to a user');
  const token = `${TOKEN_PREFIX}${randomToken(32)}`;
  await scoped(ctx, 'users').where('users.id', ctx.actor.userId).update({ calendar_feed_token_hash: sha256Hex(token) });
  await recordAudit(ctx, { action: 'meeting.feed_token_regenerated', resourceType: 'user', resourceId: ctx.actor.userId });
  return { feed_token: token, feed_url: feedUrl(ctx.deps, token) };
}

/** GET {site_url}/meetings/feed/<token>.ics: the token decides the tenant and the user. */
export async function feedByToken(deps: Deps, rawToken: string, now: Date): Promise<string> {
  const token = rawToken.replace(/\.ics$/i, '');
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 100) throw errors.notFound('calendar feed');
  const user = await deps.db('users').where('calendar_feed_token_hash', sha256Hex(token)).where('active', true)
    .first('tenant_id', 'id', 'name')
    .comment('cross-tenant: the feed token decides the tenant') as { tenant_id: string; id: string; name: string } | undefined;
  if (!user) throw errors.notFound('calendar feed');
  return inTransaction(deps, { tenantId: user.tenant_id, actor: SYSTEM_ACTOR, now }, async (ctx) => {
    await requireFeature(ctx, 'meetings');
    const from = new Date(now.getTime() - FEED_WINDOW_DAYS * 86_400_000);
    const to = new Date(now.getTime() + FEED_WINDOW_DAYS * 86_400_000);
    const meetings = await Meeting.scoped(ctx)
      .where('status', 'active')
      .where('start_at', '<', to)
      .where((w) => { w.whereNull('last_end_at').orWhere('last_end_at', '>', from); })
      .where((w) => {
        w.where('organizer_id', user.id).orWhereExists((sub) => {
          sub.select(1).from('meeting_attendees')
            .whereRaw('meeting_attendees.tenant_id = meetings.tenant_id AND meeting_attendees.meeting_id = meetings.id')
            .where('meeting_attendees.user_id', user.id);
        });
      })
      .orderBy('start_at').orderBy('id').limit(5000);
    const attendees = await attendeesOf(ctx, meetings.map((m) => m.id));
    const organizers = await scoped(ctx, 'users').whereIn('users.id', [...new Set(meetings.map((m) => m.organizer_id))]).select('users.id', 'users.name') as Array<{ id: string; name: string }>;
    const ownAddress = ownAddressOf(ctx.deps, await loadMailSettings(ctx));
    const cal = newCalendar(null);
    cal.name(`Meetings of ${user.name}`);
    for (const meeting of meetings) {
      const organizer = { name: organizers.find((o) => o.id === meeting.organizer_id)?.name ?? 'Helpdesk', email: ownAddress };
      addEvent(cal, meeting, attendees.filter((a) => a.meeting_id === meeting.id), organizer, now);
    }
    return cal.toString();
  });
}
