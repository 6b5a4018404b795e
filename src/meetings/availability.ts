import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { isUuid } from '../core/ids.js';
import { parseRfc3339, toRfc3339 } from '../core/clock.js';
import { requireFeature } from '../licensing/features.js';
import { scoped } from '../db/tenant-scope.js';
import { Meeting } from './models.js';
import { occurrences } from './recurrence.js';
import { externalBusy } from './mirroring.js';
import type { Availability, AvailabilityQuery } from './schemas.js';

/**
 * Availability (SPEC "Meeting rules" 1): for each asked user, the busy ranges in [from, to) from
 * the internal meetings they organise or attend (series expanded in their organizer's zone), the
 * meeting being edited excluded. Conflicts are advisory: nothing here ever blocks a save.
 * External busy blocks are read from the user's connected calendars (`source` calendar_a /
 * calendar_b) at the time of the question, each under a short deadline.
 */
export const MAX_WINDOW_DAYS = 366;
export const MAX_USERS = 50;

export async function availability(ctx: Ctx, query: AvailabilityQuery): Promise<Availability> {
  await requireFeature(ctx, 'meetings');
  const problems: FieldProblem[] = [];
  const from = parseRfc3339(query.from);
  const to = parseRfc3339(query.to);
  if (!from) problems.push({ field: 'from', message: 'must be an RFC 3339 timestamp' });
  if (!to) problems.push({ field: 'to', message: 'must be an RFC 3339 timestamp' });
  if (from && to && to <= from) problems.push({ field: 'to', message: 'must be after from' });
  if (from && to && to.getTime() - from.getTime() > MAX_WINDOW_DAYS * 86_400_000) problems.push({ field: 'to', message: `the window is at most ${MAX_WINDOW_DAYS} days` });
  const ids = [...new Set(query.attendee_ids.split(',').map((s) => s.trim()).filter(Boolean))];
  if (!ids.length) problems.push({ field: 'attendee_ids', message: 'must name at least one user' });
  else if (ids.length > MAX_USERS) problems.push({ field: 'attendee_ids', message: `names at most ${MAX_USERS} users` });
  else if (ids.some((id) => !isUuid(id))) problems.push({ field: 'attendee_ids', message: 'must be comma-separated user ids' });
  if (problems.length) throw errors.validation(problems);

  const users = await scoped(ctx, 'users').whereIn('users.id', ids).select('users.id', 'users.name') as Array<{ id: string; name: string }>;
  const unknown = ids.filter((id) => !users.some((u) => u.id === id));
  if (unknown.length) throw errors.invalid('attendee_ids', `names users that do not exist: ${unknown.join(', ')}`);

  const meetings = await Meeting.scoped(ctx)
    .where('status', 'active')
    .where('start_at', '<', to!)
    .where((w) => { w.whereNull('last_end_at').orWhere('last_end_at', '>', from!); })
    .where((w) => {
      w.whereIn('organizer_id', ids).orWhereExists((sub) => {
        sub.select(1).from('meeting_attendees')
          .whereRaw('meeting_attendees.tenant_id = meetings.tenant_id AND meeting_attendees.meeting_id = meetings.id')
          .whereIn('meeting_attendees.user_id', ids);
      });
    })
    .modify((qb) => { if (query.exclude_meeting_id) qb.whereNot('meetings.id', query.exclude_meeting_id); });
  const attendance = meetings.length
    ? await scoped(ctx, 'meeting_attendees').whereIn('meeting_id', meetings.map((m) => m.id)).whereIn('user_id', ids).select('meeting_id', 'user_id') as Array<{ meeting_id: string; user_id: string }>
    : [];

  const conflicts: Availability['conflicts'] = [];
  for (const user of ids.map((id) => users.find((u) => u.id === id)!)) {
    const mine = meetings.filter((m) => m.organizer_id === user.id || attendance.some((a) => a.meeting_id === m.id && a.user_id === user.id));
    const internal = mine.flatMap((m) => occurrences(m, from!, to!).map((o) => ({ start: o.start, end: o.end, source: 'meeting' })));
    // A calendar's busy block that is our own mirrored meeting is already listed as `meeting`.
    const external = (await externalBusy(ctx, user.id, from!, to!))
      .filter((b) => !internal.some((i) => i.start.getTime() === b.start.getTime() && i.end.getTime() === b.end.getTime()));
    const ranges = [...internal, ...external].sort((a, b) => a.start.getTime() - b.start.getTime() || a.source.localeCompare(b.source));
    if (!ranges.length) continue;
    conflicts.push({
      user_id: user.id,
      user_name: user.name,
      busy_ranges: ranges.map((r) => ({ start_at: toRfc3339(r.start)!, end_at: toRfc3339(r.end)!, source: r.source })),
    });
  }
  return { conflicts };
}
