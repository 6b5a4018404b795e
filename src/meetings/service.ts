import { DateTime } from 'luxon';
import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { parseRfc3339, toRfc3339 } from '../core/clock.js';
import { uuidv7 } from '../core/ids.js';
import { paginatePage, type Page } from '../core/pagination.js';
import { scoped } from '../db/tenant-scope.js';
import { diff, recordAudit } from '../audit/service.js';
import { recordEvent } from '../events/record.js';
import { requireFeature } from '../licensing/features.js';
import { Meeting, MeetingAttendee, type AttendeeResponse, type VideoProvider } from './models.js';
import { formatRecurrence, lastEnd, parseRecurrence } from './recurrence.js';
import { icalUid, queueInvitations, type Invitation } from './invitations.js';
import type { AttendeeOut, MeetingInput, MeetingListQuery, MeetingOut } from './schemas.js';
import { createRoom, dropRoom, mirrorDetached } from './mirroring.js';
import type { VideoProvider as RoomProvider } from './vendor.js';

/**
 * Meetings (SPEC "Meeting" and its state table, CONTRACT §4 and §7). Input takes both spellings
 * (`start_at`/`starts_at`, `end_at`/`ends_at`, `video_provider`/`provider`, attendees `{user_id}`
 * or `{email, name?}`); output uses the canonical names. `PUT` assigns every field (absent or null
 * clears it), `PATCH` only those sent. Each change writes its audit row, its timeline note on the
 * linked ticket and its invitations' outbox rows in one transaction.
 */
export const MAX_DURATION_MS = 31 * 86_400_000;

interface Normalised {
  title: string;
  description: string | null;
  start_at: Date;
  end_at: Date;
  timezone: string;
  video_provider: VideoProvider;
  join_url: string | null;
  ticket_id: string | null;
  recurrence_rule: string | null;
  attendees: Array<{ user_id: string | null; email: string; name: string | null }>;
}

type Mode = 'create' | 'put' | 'patch';

/** Either spelling; both given and different is a problem. `undefined` = not sent. */
function pick<T>(input: Record<string, unknown>, a: string, b: string, problems: FieldProblem[]): T | null | undefined {
  const first = input[a] as T | null | undefined;
  const second = input[b] as T | null | undefined;
  if (first !== undefined && second !== undefined && first !== second) {
    problems.push({ field: b, message: `conflicts with ${a}; send one of them` });
  }
  return first !== undefined ? first : second;
}

function validZone(zone: string): boolean {
  return DateTime.now().setZone(zone).isValid;
}

async function organizerZone(ctx: Ctx, organizerId: string): Promise<string> {
  const user = await scoped(ctx, 'users').where('users.id', organizerId).first('timezone') as { timezone: string | null } | undefined;
  if (user?.timezone && validZone(user.timezone)) return user.timezone;
  const hours = await scoped(ctx, 'business_hours').first('timezone') as { timezone: string } | undefined;
  return hours?.timezone && validZone(hours.timezone) ? hours.timezone : 'UTC';
}

async function resolveAttendees(ctx: Ctx, list: MeetingInput['attendees'], ticketId: string | null, problems: FieldProblem[]): Promise<Normalised['attendees']> {
  const out: Normalised['attendees'] = [];
  const seen = new Set<string>();
  const items = list ?? [];
  const userIds = items.flatMap((a) => ('user_id' in a ? [a.user_id] : []));
  const users = userIds.length
    ? await scoped(ctx, 'users').whereIn('users.id', userIds).select('users.id', 'users.email', 'users.name', 'users.role', 'users.active') as
      Array<{ id: string; email: string; name: string; role: string; active: boolean }>
    : [];
  const collaborators = new Set<string>();
  if (ticketId && userIds.length) {
    const rows = await scoped(ctx, 'ticket_collaborators').where('ticket_id', ticketId).whereNotNull('user_id').select('user_id') as Array<{ user_id: string }>;
    for (const r of rows) collaborators.add(r.user_id);
    const ticket = await scoped(ctx, 'tickets').where('tickets.id', ticketId).first('requester_id') as { requester_id: string } | undefined;
    if (ticket) collaborators.add(ticket.requester_id);
  }
  for (const [index, item] of items.entries()) {
    if ('user_id' in item) {
      const user = users.find((u) => u.id === item.user_id);
      if (!user || !user.active) {
        problems.push({ field: `attendees.${index}.user_id`, message: 'is not an active user of this helpdesk' });
        continue;
      }
      if (user.role === 'customer' && !collaborators.has(user.id)) {
        problems.push({ field: `attendees.${index}.user_id`, message: 'must be a staff user or a participant of the linked ticket; invite others by email' });
        continue;
      }
      const email = user.email.toLowerCase();
      if (seen.has(email)) continue;
      seen.add(email);
      out.push({ user_id: user.id, email, name: user.name });
    } else {
      const email = item.email.trim().toLowerCase();
      if (seen.has(email)) continue;
      seen.add(email);
      out.push({ user_id: null, email, name: item.name?.trim() || null });
    }
  }
  return out;
}

/** The meeting as it will be stored: checks and defaults of create, PUT and PATCH in one place. */
async function normalise(ctx: Ctx, mode: Mode, input: MeetingInput, before: Normalised | null, organizerId: string): Promise<Normalised> {
  const problems: FieldProblem[] = [];
  const raw = input as Record<string, unknown>;
  const startText = pick<string>(raw, 'start_at', 'starts_at', problems);
  const endText = pick<string>(raw, 'end_at', 'ends_at', problems);
  const provider = pick<VideoProvider>(raw, 'video_provider', 'provider', problems);
  // PATCH keeps what is not sent; create and PUT take the body as the whole meeting.
  const keep = <T>(sent: T | null | undefined, old: T | null | undefined): T | null | undefined =>
    mode === 'patch' && sent === undefined ? old : sent;

  const title = keep(input.title, before?.title)?.trim();
  if (!title) problems.push({ field: 'title', message: 'is required' });
  const startSent = keep(startText, before ? toRfc3339(before.start_at) : undefined);
  const endSent = keep(endText, before ? toRfc3339(before.end_at) : undefined);
  const start = startSent ? parseRfc3339(startSent) : null;
  const end = endSent ? parseRfc3339(endSent) : null;
  if (!startSent) problems.push({ field: 'start_at', message: 'is required' });
  else if (!start) problems.push({ field: 'start_at', message: 'must be an RFC 3339 timestamp' });
  if (!endSent) problems.push({ field: 'end_at', message: 'is required' });
  else if (!end) problems.push({ field: 'end_at', message: 'must be an RFC 3339 timestamp' });
  if (start && end && end <= start) problems.push({ field: 'end_at', message: 'must be after start_at' });
  else if (start && end && end.getTime() - start.getTime() > MAX_DURATION_MS) problems.push({ field: 'end_at', message: 'a meeting lasts at most 31 days' });

  let timezone = keep(input.timezone, before?.timezone) ?? null;
  if (timezone && !validZone(timezone)) {
    problems.push({ field: 'timezone', message: 'is not an IANA time zone' });
    timezone = null;
  }
  timezone ??= await organizerZone(ctx, organizerId);

  let recurrence = keep(input.recurrence_rule, before?.recurrence_rule) ?? null;
  if (recurrence !== null) {
    const parsed = parseRecurrence(recurrence);
    if ('problem' in parsed) {
      problems.push(parsed.problem);
      recurrence = null;
    } else {
      recurrence = formatRecurrence(parsed.rule);
      if (parsed.rule.until && start && parsed.rule.until < start) problems.push({ field: 'recurrence_rule', message: 'UNTIL is before start_at' });
    }
  }

  const videoProvider = keep(provider, before?.video_provider) ?? 'manual';
  const joinUrl = keep(input.join_url, before?.join_url) ?? null;
  if (joinUrl !== null && videoProvider !== 'manual' && input.join_url !== undefined) {
    problems.push({ field: 'join_url', message: 'is set only for video_provider manual (connectors create their rooms)' });
  }

  const ticketId = keep(input.ticket_id, before?.ticket_id) ?? null;
  if (ticketId && (mode !== 'patch' || input.ticket_id !== undefined)) {
    const ticket = await scoped(ctx, 'tickets').where('tickets.id', ticketId).first('tickets.id');
    if (!ticket) problems.push({ field: 'ticket_id', message: 'is not a ticket of this helpdesk' });
  }

  let attendees: Normalised['attendees'];
  if (mode === 'patch' && input.attendees === undefined) attendees = before!.attendees;
  else attendees = await resolveAttendees(ctx, input.attendees ?? [], ticketId, problems);

  if (problems.length) throw errors.validation(problems);
  return {
    title: title!, description: keep(input.description, before?.description) ?? null, start_at: start!, end_at: end!, timezone,
    video_provider: videoProvider, join_url: videoProvider === 'manual' ? joinUrl : (before?.video_provider === videoProvider ? before.join_url : null),
    ticket_id: ticketId, recurrence_rule: recurrence, attendees,
  };
}

function attendeeOut(row: MeetingAttendee): AttendeeOut {
  return { id: row.id, user_id: row.user_id, email: row.email, name: row.name, response: row.response };
}

export function meetingOut(row: Meeting, attendees: MeetingAttendee[]): MeetingOut {
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    start_at: toRfc3339(row.start_at)!,
    end_at: toRfc3339(row.end_at)!,
    timezone: row.timezone,
    video_provider: row.video_provider,
    join_url: row.join_url,
    ticket_id: row.ticket_id,
    organizer_id: row.organizer_id,
    attendees: attendees.map(attendeeOut),
    recurrence_rule: row.recurrence_rule,
    invite_sequence: row.invite_sequence,
    status: row.status,
    cancel_reason: row.cancel_reason,
    ical_uid: icalUid(row.id),
    created_at: toRfc3339(row.created_at)!,
    updated_at: toRfc3339(row.updated_at)!,
  };
}

export async function attendeesOf(ctx: Ctx, meetingIds: string[]): Promise<MeetingAttendee[]> {
  if (!meetingIds.length) return [];
  return MeetingAttendee.scoped(ctx).whereIn('meeting_id', meetingIds).orderBy('position').orderBy('id');
}

export async function loadMeeting(ctx: Ctx, id: string, options: { forUpdate?: boolean } = {}): Promise<Meeting> {
  const qb = Meeting.scoped(ctx).where('meetings.id', id);
  if (options.forUpdate) qb.forUpdate();
  const [row] = await qb.limit(1);
  if (!row) throw errors.notFound('meeting', id);
  return row;
}

function organizerOf(ctx: Ctx): string {
  if (!ctx.actor.userId) throw errors.forbidden('A meeting is organised by a user; sign in or use a user\'s API key');
  return ctx.actor.userId;
}

async function organizerName(ctx: Ctx, organizerId: string): Promise<string> {
  const row = await scoped(ctx, 'users').where('users.id', organizerId).first('name') as { name: string } | undefined;
  return row?.name ?? 'Helpdesk';
}

/** The timeline note (`meeting_scheduled`, …) on the linked ticket: an event of the ticket. */
async function note(ctx: Ctx, kind: 'meeting_scheduled' | 'meeting_updated' | 'meeting_cancelled' | 'meeting_rsvp', meeting: Meeting, ticketId: string | null, extra: Record<string, unknown> = {}, actor?: { id: string | null; name: string | null }): Promise<string | null> {
  if (!ticketId) return null;
  const event = await recordEvent(ctx, {
    type: `ticket.${kind}`,
    subjectType: 'ticket',
    ticketId,
    to: meeting.title,
    data: {
      meeting_id: meeting.id, ticket_id: ticketId, title: meeting.title, start_at: toRfc3339(meeting.start_at), end_at: toRfc3339(meeting.end_at),
      recurrence_rule: meeting.recurrence_rule, invite_sequence: meeting.invite_sequence, status: meeting.status, ...extra,
    },
    ...(actor ? { actor } : {}),
  });
  return event.id;
}

async function writeAttendees(ctx: Ctx, meetingId: string, wanted: Normalised['attendees'], existing: MeetingAttendee[], resetResponses: boolean): Promise<MeetingAttendee[]> {
  const keepIds: string[] = [];
  for (const [position, a] of wanted.entries()) {
    const old = existing.find((e) => e.email === a.email);
    if (old) {
      keepIds.push(old.id);
      const response: AttendeeResponse = resetResponses ? 'needs_action' : old.response;
      await MeetingAttendee.scoped(ctx).where('id', old.id).patch({ user_id: a.user_id, name: a.name, position, response } as never);
    } else {
      const row = await MeetingAttendee.insertIn(ctx, { id: uuidv7(ctx.now.getTime()), meeting_id: meetingId, user_id: a.user_id, email: a.email, name: a.name, position, response: 'needs_action' });
      keepIds.push(row.id);
    }
  }
  const removed = existing.filter((e) => !keepIds.includes(e.id));
  if (removed.length) await MeetingAttendee.scoped(ctx).whereIn('id', removed.map((r) => r.id)).delete();
  return attendeesOf(ctx, [meetingId]);
}

export async function listMeetings(ctx: Ctx, query: MeetingListQuery): Promise<Page<MeetingOut>> {
  await requireFeature(ctx, 'meetings');
  const qb = Meeting.scoped(ctx).orderBy('start_at').orderBy('id');
  if (query.ticket_id) qb.where('ticket_id', query.ticket_id);
  if (query.status) qb.where('status', query.status);
  const page = await paginatePage<Meeting, Meeting>(query, qb);
  const attendees = await attendeesOf(ctx, page.data.map((m) => m.id));
  return { ...page, data: page.data.map((m) => meetingOut(m, attendees.filter((a) => a.meeting_id === m.id))) };
}

export async function getMeeting(ctx: Ctx, id: string): Promise<MeetingOut> {
  await requireFeature(ctx, 'meetings');
  const row = await loadMeeting(ctx, id);
  return meetingOut(row, await attendeesOf(ctx, [id]));
}

export async function createMeeting(ctx: Ctx, input: MeetingInput): Promise<MeetingOut> {
  await requireFeature(ctx, 'meetings');
  const organizerId = organizerOf(ctx);
  const m = await normalise(ctx, 'create', input, null, organizerId);
  const room = m.video_provider !== 'manual' ? await createRoom(ctx, organizerId, m.video_provider, m) : null;
  const row = await Meeting.insertIn(ctx, {
    video_room_id: room?.id ?? null,
    title: m.title, description: m.description, start_at: m.start_at, end_at: m.end_at, timezone: m.timezone,
    last_end_at: lastEnd({ ...m }), video_provider: m.video_provider, join_url: room?.join_url ?? m.join_url, ticket_id: m.ticket_id,
    organizer_id: organizerId, recurrence_rule: m.recurrence_rule, invite_sequence: 0, status: 'active', cancel_reason: null,
    created_at: ctx.now, updated_at: ctx.now,
  });
  const attendees = await writeAttendees(ctx, row.id, m.attendees, [], false);
  const eventId = await note(ctx, 'meeting_scheduled', row, row.ticket_id);
  await recordAudit(ctx, {
    action: 'meeting.created', resourceType: 'meeting', resourceId: row.id,
    changes: { title: row.title, start_at: toRfc3339(row.start_at), end_at: toRfc3339(row.end_at), ticket_id: row.ticket_id, recurrence_rule: row.recurrence_rule, attendees: attendees.map((a) => a.email) },
  });
  await queueInvitations(ctx, row, attendees, await organizerName(ctx, organizerId), attendees.map((a) => ({ attendee: a, method: 'REQUEST' as const })), eventId);
  afterCommitMirror(ctx, row);
  return meetingOut(row, attendees);
}

export async function updateMeeting(ctx: Ctx, id: string, input: MeetingInput, mode: 'put' | 'patch'): Promise<MeetingOut> {
  await requireFeature(ctx, 'meetings');
  const before = await loadMeeting(ctx, id, { forUpdate: true });
  if (before.status === 'cancelled') throw errors.meetingCancelled(id);
  const existing = await attendeesOf(ctx, [id]);
  const m = await normalise(ctx, mode, input, { ...before, attendees: existing.map((a) => ({ user_id: a.user_id, email: a.email, name: a.name })) }, before.organizer_id);
  const rescheduled = m.start_at.getTime() !== before.start_at.getTime() || m.end_at.getTime() !== before.end_at.getTime()
    || m.recurrence_rule !== before.recurrence_rule || m.timezone !== before.timezone;
  // A connector's room: kept while the provider stays, a new one for a new provider.
  let room: { id: string | null; join_url: string | null } = { id: before.video_room_id, join_url: m.join_url };
  if (m.video_provider === 'manual') room = { id: null, join_url: m.join_url };
  else if (m.video_provider !== before.video_provider || !before.video_room_id) {
    const created = await createRoom(ctx, before.organizer_id, m.video_provider, m);
    room = { id: created.id, join_url: created.join_url };
  } else room = { id: before.video_room_id, join_url: before.join_url };
  if (before.video_room_id && before.video_provider !== 'manual' && room.id !== before.video_room_id) afterCommitDropRoom(ctx, before);
  const [row] = await Meeting.scoped(ctx).where('id', id).patch({
    video_room_id: room.id,
    title: m.title, description: m.description, start_at: m.start_at, end_at: m.end_at, timezone: m.timezone, last_end_at: lastEnd({ ...m }),
    video_provider: m.video_provider, join_url: room.join_url, ticket_id: m.ticket_id, recurrence_rule: m.recurrence_rule,
    invite_sequence: before.invite_sequence + 1, updated_at: ctx.now,
  } as never).returning('*') as unknown as Meeting[];
  // A new time asks everyone again; other edits keep the answers given.
  const attendees = await writeAttendees(ctx, id, m.attendees, existing, rescheduled);
  const removed = existing.filter((e) => !attendees.some((a) => a.email === e.email));
  const eventId = await note(ctx, 'meeting_updated', row!, row!.ticket_id);
  if (before.ticket_id && before.ticket_id !== row!.ticket_id) await note(ctx, 'meeting_updated', row!, before.ticket_id, { unlinked: true });
  const changes = diff(
    { ...before, start_at: toRfc3339(before.start_at), end_at: toRfc3339(before.end_at), attendees: existing.map((a) => a.email) },
    { ...row!, start_at: toRfc3339(row!.start_at), end_at: toRfc3339(row!.end_at), attendees: attendees.map((a) => a.email) },
    ['title', 'description', 'start_at', 'end_at', 'timezone', 'video_provider', 'join_url', 'ticket_id', 'recurrence_rule', 'attendees'],
  );
  await recordAudit(ctx, { action: 'meeting.updated', resourceType: 'meeting', resourceId: id, changes: { ...changes, invite_sequence: row!.invite_sequence } });
  const invitations: Invitation[] = [
    ...attendees.map((a) => ({ attendee: a, method: 'REQUEST' as const })),
    ...removed.map((a) => ({ attendee: a, method: 'CANCEL' as const })),
  ];
  await queueInvitations(ctx, row!, attendees, await organizerName(ctx, row!.organizer_id), invitations, eventId);
  afterCommitMirror(ctx, row!);
  return meetingOut(row!, attendees);
}

export async function cancelMeeting(ctx: Ctx, id: string, reason: string | null | undefined): Promise<MeetingOut> {
  await requireFeature(ctx, 'meetings');
  const before = await loadMeeting(ctx, id, { forUpdate: true });
  if (before.status === 'cancelled') throw errors.meetingCancelled(id);
  const [row] = await Meeting.scoped(ctx).where('id', id).patch({
    status: 'cancelled', cancel_reason: reason?.trim() || null, invite_sequence: before.invite_sequence + 1, updated_at: ctx.now,
  } as never).returning('*') as unknown as Meeting[];
  const attendees = await attendeesOf(ctx, [id]);
  const eventId = await note(ctx, 'meeting_cancelled', row!, row!.ticket_id, { reason: row!.cancel_reason });
  await recordAudit(ctx, { action: 'meeting.cancelled', resourceType: 'meeting', resourceId: id, changes: { reason: row!.cancel_reason } });
  await queueInvitations(ctx, row!, attendees, await organizerName(ctx, row!.organizer_id), attendees.map((a) => ({ attendee: a, method: 'CANCEL' as const })), eventId);
  afterCommitMirror(ctx, row!);
  afterCommitDropRoom(ctx, row!);
  return meetingOut(row!, attendees);
}

/** Deletes the record; attendees of a meeting still active are told it is off. */
export async function deleteMeeting(ctx: Ctx, id: string): Promise<void> {
  await requireFeature(ctx, 'meetings');
  const row = await loadMeeting(ctx, id, { forUpdate: true });
  const attendees = await attendeesOf(ctx, [id]);
  if (row.status === 'active') {
    const gone = Object.assign(Object.create(Object.getPrototypeOf(row)) as Meeting, row, { status: 'cancelled', invite_sequence: row.invite_sequence + 1 });
    await note(ctx, 'meeting_cancelled', gone, row.ticket_id, { deleted: true });
    await queueInvitations(ctx, gone, attendees, await organizerName(ctx, row.organizer_id), attendees.map((a) => ({ attendee: a, method: 'CANCEL' as const })), null);
  }
  await Meeting.scoped(ctx).where('id', id).delete();
  afterCommitMirror(ctx, row);
  if (row.status === 'active') afterCommitDropRoom(ctx, row);
  await recordAudit(ctx, { action: 'meeting.deleted', resourceType: 'meeting', resourceId: id, changes: { title: row.title, status: row.status } });
}

/** After commit, detached: the organizer's external calendars follow the meeting (create, update, remove). */
function afterCommitMirror(ctx: Ctx, meeting: Meeting): void {
  const { deps, tenantId, now } = ctx;
  ctx.afterCommit(() => mirrorDetached(deps, tenantId, meeting.id, meeting.organizer_id, now));
}

function afterCommitDropRoom(ctx: Ctx, meeting: Meeting): void {
  if (meeting.video_provider === 'manual' || !meeting.video_room_id) return;
  const { deps, tenantId, now } = ctx;
  const provider = meeting.video_provider as RoomProvider;
  const roomId = meeting.video_room_id;
  ctx.afterCommit(() => dropRoom(deps, tenantId, meeting.organizer_id, provider, roomId, now));
}

/** Used by RSVPs: the timeline note for an answer. */
export const meetingNote = note;
