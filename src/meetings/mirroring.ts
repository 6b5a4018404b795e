import type { Ctx, Deps } from '../core/context.js';
import { SYSTEM_ACTOR } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { inTransaction } from '../db/transaction.js';
import { scoped } from '../db/tenant-scope.js';
import { accessToken, accountOf, loadConnector, targetOf, VENDOR_TIMEOUT_MS, type AccountRow } from './connectors.js';
import { CALENDAR_API, isCalendar, vendorCall, type CalendarProvider, type VideoProvider } from './vendor.js';
import { icalUid } from './invitations.js';
import type { Meeting } from './models.js';

/**
 * What the connectors do for a meeting: a video room for `video_a/b/c` (created in the request, the
 * answer needs its join_url), and the mirror of the meeting in the organizer's external calendars
 * (SPEC "Meeting rules" 2): run detached from the request after commit, under a time budget, so a
 * client that disconnects cannot cut it between the remote change and its database row; each
 * remote event's id is written right after the vendor answers.
 */
export const MIRROR_BUDGET_MS = 15_000;

export interface Room { id: string; join_url: string }

export async function createRoom(ctx: Ctx, organizerId: string, provider: VideoProvider, meeting: { title: string; start_at: Date; end_at: Date }): Promise<Room> {
  const account = await accountOf(ctx, organizerId, provider);
  if (!account) throw errors.invalid('video_provider', `needs the organizer's connected ${provider} account (connect it first)`);
  const connector = await loadConnector(ctx, provider);
  if (!connector) throw errors.invalid('video_provider', `${provider} is not registered by an administrator`);
  try {
    const room = await vendorCall<{ id?: string; join_url?: string }>(targetOf(ctx.deps, connector), 'POST', '/rooms', {
      token: await accessToken(ctx, account),
      json: { title: meeting.title, start_at: toRfc3339(meeting.start_at), end_at: toRfc3339(meeting.end_at) },
      timeoutMs: VENDOR_TIMEOUT_MS,
    });
    if (!room?.id || !room.join_url || !/^https?:\/\//.test(room.join_url)) throw new Error('the answer carries no room id and join_url');
    return { id: String(room.id), join_url: room.join_url };
  } catch (error) {
    throw errors.conflict(`The ${provider} room could not be created: ${(error as Error).message}`, { reason: 'video_room_failed' });
  }
}

/** Best effort, after commit: a room no meeting uses any more. */
export async function dropRoom(deps: Deps, tenantId: string, organizerId: string, provider: VideoProvider, roomId: string, now: Date): Promise<void> {
  await inTransaction(deps, { tenantId, actor: SYSTEM_ACTOR, now }, async (ctx) => {
    const account = await accountOf(ctx, organizerId, provider);
    const connector = await loadConnector(ctx, provider);
    if (!account || !connector) return;
    await vendorCall(targetOf(deps, connector), 'DELETE', `/rooms/${encodeURIComponent(roomId)}`, { token: await accessToken(ctx, account), timeoutMs: VENDOR_TIMEOUT_MS });
  });
}

const inflight = new Set<Promise<void>>();

/** Starts the mirror of one meeting, detached; failures are logged. */
export function mirrorDetached(deps: Deps, tenantId: string, meetingId: string, organizerId: string, now: Date): void {
  const run = mirrorMeeting(deps, tenantId, meetingId, organizerId, now)
    .catch((error) => deps.log.warn({ err: error, tenant_id: tenantId, meeting_id: meetingId }, 'calendar mirroring failed'))
    .finally(() => inflight.delete(run));
  inflight.add(run);
}

/** Waits for the mirrors under way (graceful shutdown, tests). */
export async function settleMirrors(): Promise<void> {
  while (inflight.size) await Promise.all([...inflight]);
}

function eventBody(meeting: Meeting, attendees: string[]) {
  return {
    title: meeting.title, description: meeting.description, start_at: toRfc3339(meeting.start_at), end_at: toRfc3339(meeting.end_at),
    timezone: meeting.timezone, recurrence: meeting.recurrence_rule ? [`RRULE:${meeting.recurrence_rule}`] : [],
    join_url: meeting.join_url, attendees, ical_uid: icalUid(meeting.id),
  };
}

async function mirrorMeeting(deps: Deps, tenantId: string, meetingId: string, organizerId: string, now: Date): Promise<void> {
  const deadline = Date.now() + MIRROR_BUDGET_MS;
  const remaining = () => Math.max(1, Math.min(VENDOR_TIMEOUT_MS, deadline - Date.now()));
  for (const provider of ['calendar_a', 'calendar_b'] as CalendarProvider[]) {
    if (Date.now() >= deadline) break;
    await inTransaction(deps, { tenantId, actor: SYSTEM_ACTOR, now }, async (ctx) => {
      const account = await accountOf(ctx, organizerId, provider);
      const connector = await loadConnector(ctx, provider);
      if (!account || !connector) return;
      const meeting = await scoped(ctx, 'meetings').where('id', meetingId).first() as Meeting | undefined;
      const mirror = await scoped(ctx, 'meeting_mirrors').where({ meeting_id: meetingId, account_id: account.id }).forUpdate().first() as { remote_event_id: string } | undefined;
      const api = CALENDAR_API[provider];
      const token = await accessToken(ctx, account as AccountRow);
      const target = targetOf(deps, connector);
      if (!meeting || meeting.status === 'cancelled') {
        if (!mirror) return;
        await vendorCall(target, 'DELETE', `${api.events}/${encodeURIComponent(mirror.remote_event_id)}`, { token, timeoutMs: remaining() });
        await scoped(ctx, 'meeting_mirrors').where({ meeting_id: meetingId, account_id: account.id }).delete();
        return;
      }
      const attendees = (await scoped(ctx, 'meeting_attendees').where('meeting_id', meetingId).orderBy('position').pluck('email')) as string[];
      if (mirror) {
        await vendorCall(target, api.update, `${api.events}/${encodeURIComponent(mirror.remote_event_id)}`, { token, json: eventBody(meeting, attendees), timeoutMs: remaining() });
        await scoped(ctx, 'meeting_mirrors').where({ meeting_id: meetingId, account_id: account.id }).update({ updated_at: now });
        return;
      }
      const created = await vendorCall<{ id?: string }>(target, 'POST', api.events, { token, json: eventBody(meeting, attendees), timeoutMs: remaining() });
      if (!created?.id) throw new Error(`${provider} created an event without an id`);
      await ctx.trx('meeting_mirrors').insert({ tenant_id: tenantId, meeting_id: meetingId, account_id: account.id, remote_event_id: String(created.id), created_at: now, updated_at: now });
    });
  }
}

/** External busy blocks of a user's connected calendars in [from, to); a calendar that fails or is slow is skipped. */
export async function externalBusy(ctx: Ctx, userId: string, from: Date, to: Date): Promise<Array<{ start: Date; end: Date; source: CalendarProvider }>> {
  const accounts = await scoped(ctx, 'connector_accounts').where('user_id', userId).whereIn('provider', ['calendar_a', 'calendar_b']) as AccountRow[];
  const out: Array<{ start: Date; end: Date; source: CalendarProvider }> = [];
  for (const account of accounts) {
    if (!isCalendar(account.provider)) continue;
    try {
      const connector = await loadConnector(ctx, account.provider);
      if (!connector) continue;
      const answer = await vendorCall<{ busy?: Array<{ start?: string; end?: string }> }>(targetOf(ctx.deps, connector), 'POST', CALENDAR_API[account.provider].freeBusy, {
        token: await accessToken(ctx, account), json: { start: from.toISOString(), end: to.toISOString() }, timeoutMs: 3000,
      });
      for (const block of answer?.busy ?? []) {
        const start = new Date(String(block.start));
        const end = new Date(String(block.end));
        if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime()) || end <= start) continue;
        if (start < to && end > from) out.push({ start, end, source: account.provider });
      }
    } catch (error) {
      ctx.deps.log.warn({ err: error, provider: account.provider }, 'external busy blocks not read');
    }
  }
  return out;
}
