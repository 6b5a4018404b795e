import type { Ctx } from '../core/context.js';
import { isUuid } from '../core/ids.js';
import { recordAudit } from '../audit/service.js';
import { hasFeature, entitlements } from '../licensing/features.js';
import { Meeting, MeetingAttendee, type AttendeeResponse } from './models.js';
import { ICAL_UID_DOMAIN } from './invitations.js';
import { meetingNote } from './service.js';

/**
 * Inbound RSVPs (SPEC "Meeting rules" 4): a mail whose calendar part is METHOD:REPLY reaches us
 * through the inbound mail route or IMAP (src/mail/ recognises it and never makes a ticket of it);
 * here the attendee's PARTSTAT updates their record and a `meeting_rsvp` note goes on the linked
 * ticket. Replies to unknown or cancelled meetings, or from people not invited, are dropped.
 */
interface Reply { method: string | null; uid: string | null; attendees: Array<{ email: string; partstat: string | null }> }

/** Just enough of RFC 5545 for a REPLY: unfolded lines, the VEVENT's UID and ATTENDEE lines. */
export function parseReply(ics: string): Reply {
  const lines = ics.replace(/\r?\n[ \t]/g, '').split(/\r?\n/);
  const reply: Reply = { method: null, uid: null, attendees: [] };
  let inEvent = false;
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    // The name and its parameters end at the first colon outside quotes.
    let end = -1;
    let quoted = false;
    for (let i = 0; i < line.length; i += 1) {
      if (line[i] === '"') quoted = !quoted;
      else if (line[i] === ':' && !quoted) { end = i; break; }
    }
    if (end < 0) continue;
    const head = line.slice(0, end);
    const value = line.slice(end + 1).trim();
    const [name, ...params] = head.split(';');
    const upper = name!.toUpperCase();
    if (upper === 'BEGIN' && value.toUpperCase() === 'VEVENT') inEvent = true;
    else if (upper === 'END' && value.toUpperCase() === 'VEVENT') inEvent = false;
    else if (upper === 'METHOD' && !inEvent) reply.method = value.toUpperCase();
    else if (upper === 'UID' && inEvent) reply.uid = value;
    else if (upper === 'ATTENDEE' && inEvent) {
      const partstat = params.map((p) => /^PARTSTAT=(.*)$/i.exec(p)?.[1]).find(Boolean)?.toUpperCase().replace(/"/g, '') ?? null;
      reply.attendees.push({ email: value.replace(/^mailto:/i, '').trim().toLowerCase(), partstat });
    }
  }
  return reply;
}

const PARTSTAT: Record<string, AttendeeResponse> = { ACCEPTED: 'accepted', DECLINED: 'declined', TENTATIVE: 'tentative' };

export async function handleRsvp(ctx: Ctx, input: { from: string; ics: string }): Promise<void> {
  const reply = parseReply(input.ics);
  if (reply.method !== 'REPLY' || !reply.uid) return;
  const match = new RegExp(`^([0-9a-f-]{36})@${ICAL_UID_DOMAIN.replace(/\./g, '\\.')}$`, 'i').exec(reply.uid);
  if (!match || !isUuid(match[1]!.toLowerCase())) return;
  if (!hasFeature(await entitlements(ctx), 'meetings')) return;
  const meeting = await Meeting.scoped(ctx).where('meetings.id', match[1]!.toLowerCase()).forUpdate().first();
  if (!meeting || meeting.status !== 'active') return;
  const from = input.from.toLowerCase();
  const attendees = await MeetingAttendee.scoped(ctx).where('meeting_id', meeting.id);
  // The answer of the sender, when the reply names them; else the one attendee a reply names.
  const named = reply.attendees.find((a) => a.email === from) ?? (reply.attendees.length === 1 ? reply.attendees[0] : undefined);
  if (!named) return;
  const attendee = attendees.find((a) => a.email === named.email) ?? attendees.find((a) => a.email === from);
  const response = named.partstat ? PARTSTAT[named.partstat] : undefined;
  if (!attendee || !response) return;
  await MeetingAttendee.scoped(ctx).where('id', attendee.id).patch({ response } as never);
  const actor = { id: attendee.user_id, name: attendee.name ?? attendee.email };
  await meetingNote(ctx, 'meeting_rsvp', meeting, meeting.ticket_id, { attendee_email: attendee.email, response, from: attendee.response }, actor);
  await recordAudit(ctx, {
    action: 'meeting.rsvp', resourceType: 'meeting', resourceId: meeting.id,
    changes: { attendee: attendee.email, response: { from: attendee.response, to: response } },
    actor: { type: 'system', id: null, name: attendee.email },
  });
}
