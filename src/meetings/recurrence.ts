import rrulePkg from 'rrule';
import { DateTime } from 'luxon';
import type { FieldProblem } from '../core/errors.js';

// rrule is CommonJS: a named import compiles but fails at run time (STACK.md).
const { RRule } = rrulePkg;

/**
 * The spec's recurrence subset: FREQ of DAILY, WEEKLY, MONTHLY, YEARLY; INTERVAL=<n>; an optional
 * end bound COUNT=<n> or UNTIL=YYYYMMDDTHHMMSSZ; BYDAY of MO..FR for weekly rules. Anything else is
 * refused with 422, so what we store is exactly what every calendar client understands.
 */
export interface Recurrence {
  freq: 'DAILY' | 'WEEKLY' | 'MONTHLY' | 'YEARLY';
  interval: number;
  count: number | null;
  until: Date | null;
  byday: string[];
}

const FREQS = ['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'] as const;
const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR'] as const;
export const MAX_COUNT = 1000;
const MAX_INTERVAL = 1000;

export function parseRecurrence(text: string, field = 'recurrence_rule'): { rule: Recurrence } | { problem: FieldProblem } {
  const fail = (message: string) => ({ problem: { field, message } });
  const body = text.trim().replace(/^RRULE:/i, '');
  if (!body) return fail('is empty');
  const parts = new Map<string, string>();
  for (const part of body.split(';')) {
    const match = /^([A-Za-z]+)=([^=;]+)$/.exec(part);
    if (!match) return fail(`part "${part.slice(0, 40)}" is not NAME=VALUE`);
    const name = match[1]!.toUpperCase();
    if (parts.has(name)) return fail(`${name} is given twice`);
    parts.set(name, match[2]!.toUpperCase());
  }
  for (const name of parts.keys()) {
    if (!['FREQ', 'INTERVAL', 'COUNT', 'UNTIL', 'BYDAY'].includes(name)) return fail(`${name} is not supported (FREQ, INTERVAL, COUNT, UNTIL, BYDAY are)`);
  }
  const freq = parts.get('FREQ');
  if (!freq) return fail('needs FREQ');
  if (!(FREQS as readonly string[]).includes(freq)) return fail('FREQ must be DAILY, WEEKLY, MONTHLY or YEARLY');
  let interval = 1;
  if (parts.has('INTERVAL')) {
    if (!/^[0-9]{1,4}$/.test(parts.get('INTERVAL')!)) return fail('INTERVAL must be a positive integer');
    interval = Number(parts.get('INTERVAL'));
    if (interval < 1 || interval > MAX_INTERVAL) return fail(`INTERVAL must be between 1 and ${MAX_INTERVAL}`);
  }
  if (parts.has('COUNT') && parts.has('UNTIL')) return fail('takes COUNT or UNTIL, not both');
  let count: number | null = null;
  if (parts.has('COUNT')) {
    if (!/^[0-9]{1,4}$/.test(parts.get('COUNT')!)) return fail('COUNT must be a positive integer');
    count = Number(parts.get('COUNT'));
    if (count < 1 || count > MAX_COUNT) return fail(`COUNT must be between 1 and ${MAX_COUNT}`);
  }
  let until: Date | null = null;
  if (parts.has('UNTIL')) {
    const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(parts.get('UNTIL')!);
    const parsed = m ? DateTime.fromObject(
      { year: +m[1]!, month: +m[2]!, day: +m[3]!, hour: +m[4]!, minute: +m[5]!, second: +m[6]! }, { zone: 'utc' }) : null;
    if (!parsed || !parsed.isValid) return fail('UNTIL must be YYYYMMDDTHHMMSSZ (UTC)');
    until = parsed.toJSDate();
  }
  let byday: string[] = [];
  if (parts.has('BYDAY')) {
    if (freq !== 'WEEKLY') return fail('BYDAY is allowed only with FREQ=WEEKLY');
    byday = parts.get('BYDAY')!.split(',');
    if (!byday.length || byday.some((d) => !(WEEKDAYS as readonly string[]).includes(d))) return fail('BYDAY must list MO, TU, WE, TH or FR');
    if (new Set(byday).size !== byday.length) return fail('BYDAY lists a day twice');
    byday = WEEKDAYS.filter((d) => byday.includes(d));
  }
  return { rule: { freq: freq as Recurrence['freq'], interval, count, until, byday } };
}

const utcStamp = (d: Date) => DateTime.fromJSDate(d, { zone: 'utc' }).toFormat("yyyyMMdd'T'HHmmss'Z'");

/** The canonical text we store and send: `FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE;COUNT=10`. */
export function formatRecurrence(rule: Recurrence): string {
  const parts = [`FREQ=${rule.freq}`];
  if (rule.interval !== 1) parts.push(`INTERVAL=${rule.interval}`);
  if (rule.byday.length) parts.push(`BYDAY=${rule.byday.join(',')}`);
  if (rule.count !== null) parts.push(`COUNT=${rule.count}`);
  if (rule.until) parts.push(`UNTIL=${utcStamp(rule.until)}`);
  return parts.join(';');
}

/** Wall-clock time in `zone` as a "floating" Date whose UTC fields are that wall time. */
function floating(date: Date, zone: string): Date {
  const local = DateTime.fromJSDate(date, { zone });
  return new Date(Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second));
}

/** A floating Date back to the instant it names in `zone` (a skipped DST hour moves forward). */
function fromFloating(date: Date, zone: string): Date {
  return DateTime.fromObject({
    year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate(),
    hour: date.getUTCHours(), minute: date.getUTCMinutes(), second: date.getUTCSeconds(),
  }, { zone }).toJSDate();
}

export interface Occurrence { start: Date; end: Date }

export interface SeriesInput { start_at: Date; end_at: Date; timezone: string; recurrence_rule: string | null }

const DAY_INDEX: Record<string, number> = { MO: 0, TU: 1, WE: 2, TH: 3, FR: 4 };

/**
 * The occurrences of a meeting that overlap [from, to). A series is expanded by rrule in floating
 * local time of the organizer's zone (rrule's own tzid handling depends on the process zone) and
 * each start is placed in the zone with luxon, so 09:00 stays 09:00 local across DST changes.
 * Each occurrence keeps the first one's wall-clock length.
 */
export function occurrences(meeting: SeriesInput, from: Date, to: Date, limit = 5000): Occurrence[] {
  const duration = meeting.end_at.getTime() - meeting.start_at.getTime();
  if (!meeting.recurrence_rule) {
    return meeting.start_at < to && meeting.end_at > from ? [{ start: meeting.start_at, end: meeting.end_at }] : [];
  }
  const parsed = parseRecurrence(meeting.recurrence_rule);
  if ('problem' in parsed) return [];
  const rule = parsed.rule;
  const zone = meeting.timezone;
  const dtstart = floating(meeting.start_at, zone);
  const rrule = new RRule({
    freq: RRule[rule.freq],
    interval: rule.interval,
    dtstart,
    ...(rule.count !== null ? { count: rule.count } : {}),
    ...(rule.until ? { until: floating(rule.until, zone) } : {}),
    ...(rule.byday.length ? { byweekday: rule.byday.map((d) => DAY_INDEX[d]!) } : {}),
  });
  // Search the floating window widened by a day each side (zone offsets) and by the duration.
  const lo = new Date(floating(from, 'utc').getTime() - duration - 2 * 86_400_000);
  const hi = new Date(floating(to, 'utc').getTime() + 2 * 86_400_000);
  const out: Occurrence[] = [];
  for (const local of rrule.between(lo, hi, true)) {
    const start = fromFloating(local, zone);
    const end = new Date(start.getTime() + duration);
    if (start < to && end > from) out.push({ start, end });
    if (out.length >= limit) break;
  }
  return out;
}

/** The end of the last occurrence, or null when the series has no end bound. */
export function lastEnd(meeting: SeriesInput): Date | null {
  if (!meeting.recurrence_rule) return meeting.end_at;
  const parsed = parseRecurrence(meeting.recurrence_rule);
  if ('problem' in parsed) return meeting.end_at;
  const rule = parsed.rule;
  if (rule.count === null && !rule.until) return null;
  const duration = meeting.end_at.getTime() - meeting.start_at.getTime();
  if (rule.until) return new Date(Math.max(rule.until.getTime(), meeting.start_at.getTime()) + duration + 86_400_000);
  const zone = meeting.timezone;
  const rrule = new RRule({
    freq: RRule[rule.freq], interval: rule.interval, dtstart: floating(meeting.start_at, zone), count: rule.count!,
    ...(rule.byday.length ? { byweekday: rule.byday.map((d) => DAY_INDEX[d]!) } : {}),
  });
  const all = rrule.all();
  const last = all.length ? fromFloating(all[all.length - 1]!, zone) : meeting.start_at;
  return new Date(last.getTime() + duration);
}
