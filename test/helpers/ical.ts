import ICAL from 'ical.js';
import type { ParsedMail } from 'mailparser';

/**
 * Invitations and feeds read by an independent iCalendar parser (ical.js), the way a mail client
 * or calendar reads them.
 */
export interface ParsedEvent {
  method: string | null;
  uid: string;
  sequence: number;
  summary: string;
  status: string | null;
  tzid: string | null;
  start: ICAL.Time;
  end: ICAL.Time;
  rrule: string | null;
  attendees: Array<{ email: string; partstat: string }>;
  organizer: string | null;
  component: ICAL.Component;
}

export function parseCalendar(text: string): { method: string | null; events: ParsedEvent[]; root: ICAL.Component } {
  const root = new ICAL.Component(ICAL.parse(text));
  const method = (root.getFirstPropertyValue('method') as string | null) ?? null;
  for (const tz of root.getAllSubcomponents('vtimezone')) ICAL.TimezoneService.register(tz);
  const events = root.getAllSubcomponents('vevent').map((component) => {
    const event = new ICAL.Event(component);
    const dtstart = component.getFirstProperty('dtstart')!;
    const rrule = component.getFirstPropertyValue('rrule');
    return {
      method,
      uid: event.uid,
      sequence: event.sequence,
      summary: event.summary,
      status: (component.getFirstPropertyValue('status') as string | null) ?? null,
      tzid: (dtstart.getParameter('tzid') as string | undefined) ?? null,
      start: event.startDate,
      end: event.endDate,
      rrule: rrule ? rrule.toString() : null,
      attendees: component.getAllProperties('attendee').map((p) => ({
        email: String(p.getFirstValue()).replace(/^mailto:/i, '').toLowerCase(),
        partstat: String(p.getParameter('partstat') ?? ''),
      })),
      organizer: component.getFirstPropertyValue('organizer') ? String(component.getFirstPropertyValue('organizer')).replace(/^mailto:/i, '') : null,
      component,
    };
  });
  return { method, events, root };
}

/** The text/calendar part of a received mail. */
export function calendarPartOf(parsed: ParsedMail): { method: string | null; text: string } {
  const part = parsed.attachments.find((a) => /text\/calendar/i.test(a.contentType));
  if (!part) throw new Error('no text/calendar part');
  const method = /method=([A-Z]+)/i.exec(String(part.headers.get('content-type') && JSON.stringify(part.headers.get('content-type'))))?.[1] ?? null;
  return { method, text: part.content.toString('utf8') };
}
