import ical, { ICalAttendeeRole, ICalAttendeeStatus, ICalCalendarMethod, ICalEventStatus, type ICalCalendar } from 'ical-generator';
import { getVtimezoneComponent } from '@touch4it/ical-timezones';
import { DateTime } from 'luxon';
import type { Ctx } from '../core/context.js';
import { uuidv7 } from '../core/ids.js';
import { NotificationRecord } from '../mail/models.js';
import { escapeHtml } from '../mail/render.js';
import { loadMailSettings } from '../mail/settings-store.js';
import { sendDueNotifications } from '../mail/send.js';
import { domainOf, notificationMessageId } from '../mail/threading.js';
import { ownAddressOf } from '../mail/transports.js';
import type { Meeting, MeetingAttendee } from './models.js';

/**
 * iCalendar invitations (SPEC "Meeting rules" 3): one UID per meeting, independent of the site
 * address, and the meeting's `invite_sequence` as SEQUENCE, so a mail client replaces its entry on
 * every update. Attendees still invited get METHOD:REQUEST, removed ones METHOD:CANCEL. Each mail
 * is a row of the mail outbox (written in the change's transaction, sent after commit through the
 * tenant's SMTP relay, retried by the `mail-send` job).
 */
export const ICAL_UID_DOMAIN = 'meetings.helpdesk.invalid';
export const icalUid = (meetingId: string) => `${meetingId}@${ICAL_UID_DOMAIN}`;
export const PROD_ID = { company: 'Helpdesk', product: 'Meetings', language: 'EN' };

const RESPONSE_TO_PARTSTAT: Record<MeetingAttendee['response'], ICalAttendeeStatus> = {
  needs_action: ICalAttendeeStatus.NEEDSACTION,
  accepted: ICalAttendeeStatus.ACCEPTED,
  declined: ICalAttendeeStatus.DECLINED,
  tentative: ICalAttendeeStatus.TENTATIVE,
};

export interface Organizer { name: string; email: string }

/** Adds the meeting as one VEVENT (a series carries its RRULE) in the organizer's zone. */
export function addEvent(cal: ICalCalendar, meeting: Meeting, attendees: MeetingAttendee[], organizer: Organizer, now: Date, cancelled = false): void {
  const zone = meeting.timezone;
  const at = (d: Date) => DateTime.fromJSDate(d, { zone });
  cal.createEvent({
    id: icalUid(meeting.id),
    sequence: meeting.invite_sequence,
    stamp: DateTime.fromJSDate(now, { zone: 'utc' }),
    start: at(meeting.start_at),
    end: at(meeting.end_at),
    timezone: zone === 'UTC' ? null : zone,
    summary: meeting.title,
    description: meeting.description ?? undefined,
    location: meeting.join_url ?? undefined,
    url: meeting.join_url ?? undefined,
    repeating: meeting.recurrence_rule ? `RRULE:${meeting.recurrence_rule}` : null,
    status: cancelled || meeting.status === 'cancelled' ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
    organizer,
    attendees: attendees.map((a) => ({
      email: a.email,
      name: a.name ?? undefined,
      rsvp: true,
      role: ICalAttendeeRole.REQ,
      status: RESPONSE_TO_PARTSTAT[a.response],
    })),
  });
}

export function newCalendar(method: ICalCalendarMethod | null): ICalCalendar {
  const cal = ical({ prodId: PROD_ID, ...(method ? { method } : {}) });
  // No calendar-wide zone (it would print DTSTAMP in local time); each event names its own and
  // the generator adds the matching VTIMEZONE.
  cal.timezone({ name: null, generator: getVtimezoneComponent });
  return cal;
}

export function invitationIcs(meeting: Meeting, attendees: MeetingAttendee[], organizer: Organizer, method: 'REQUEST' | 'CANCEL', now: Date): string {
  const cal = newCalendar(method === 'REQUEST' ? ICalCalendarMethod.REQUEST : ICalCalendarMethod.CANCEL);
  addEvent(cal, meeting, attendees, organizer, now, method === 'CANCEL');
  return cal.toString();
}

function whenText(meeting: Meeting): string {
  const start = DateTime.fromJSDate(meeting.start_at, { zone: meeting.timezone });
  const end = DateTime.fromJSDate(meeting.end_at, { zone: meeting.timezone });
  const text = `${start.toFormat('cccc d LLLL yyyy, HH:mm')}–${end.toFormat('HH:mm')} (${meeting.timezone})`;
  return meeting.recurrence_rule ? `${text}, repeating (${meeting.recurrence_rule})` : text;
}

export interface Invitation { attendee: MeetingAttendee; method: 'REQUEST' | 'CANCEL' }

/**
 * Writes one outbox row per invitation and sends them after commit. The organizer shown is the
 * tenant's own mail address (with the organizer's name), so replies come back to the inbound
 * mailbox and are recognised as RSVPs.
 */
export async function queueInvitations(ctx: Ctx, meeting: Meeting, attendees: MeetingAttendee[], organizerName: string, invitations: Invitation[], eventId: string | null): Promise<string[]> {
  if (!invitations.length) return [];
  const settings = await loadMailSettings(ctx);
  const ownAddress = ownAddressOf(ctx.deps, settings);
  const domain = domainOf(ownAddress);
  const organizer = { name: organizerName, email: ownAddress };
  const ids: string[] = [];
  for (const { attendee, method } of invitations) {
    // A cancellation names only its recipient; a request carries the whole attendee list.
    const ics = invitationIcs(meeting, method === 'CANCEL' ? [attendee] : attendees, organizer, method, ctx.now);
    const verb = method === 'CANCEL' ? 'Cancelled' : meeting.invite_sequence === 0 ? 'Invitation' : 'Updated invitation';
    const subject = `${verb}: ${meeting.title}`.replace(/[\r\n]+/g, ' ');
    const lines = [
      `${verb}: ${meeting.title}`,
      whenText(meeting),
      ...(meeting.join_url && method === 'REQUEST' ? [`Join: ${meeting.join_url}`] : []),
      ...(meeting.description && method === 'REQUEST' ? ['', meeting.description] : []),
      ...(method === 'CANCEL' && meeting.cancel_reason ? ['', `Reason: ${meeting.cancel_reason}`] : []),
    ];
    const id = uuidv7(ctx.now.getTime());
    await NotificationRecord.insertIn(ctx, {
      id,
      identifier: method === 'CANCEL' ? 'meeting.cancellation' : 'meeting.invitation',
      event_id: eventId ?? id,
      ticket_id: null,
      recipient_id: attendee.user_id,
      to_address: attendee.email,
      subject,
      body_text: lines.join('\n'),
      body_html: lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('\n'),
      message_id: notificationMessageId(id, domain),
      in_reply_to: null,
      references: [],
      status: 'pending',
      next_attempt_at: ctx.now,
      created_at: ctx.now,
      ical_method: method,
      ical_content: ics,
    });
    ids.push(id);
  }
  const { deps, tenantId, now } = ctx;
  ctx.afterCommit(async () => {
    await sendDueNotifications(deps, now, { tenantId, ids });
  });
  return ids;
}
