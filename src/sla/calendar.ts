import { IANAZone } from 'luxon';

/**
 * The SLA clock's calendar (CONTRACT §11 "Clock"): which instants count.
 *
 * A business-hours calendar counts local wall-clock windows per weekday in an IANA zone, so a
 * day on which the clocks change is an hour longer or shorter; holidays close their whole local
 * day. A 24/7 calendar counts every instant and ignores holidays. Pause intervals (time in a
 * status that pauses the SLA) never count, whichever the calendar.
 *
 * Everything here is pure and works on epoch milliseconds; nothing reads the wall clock.
 */

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export type DaySchedule = { open: string; close: string } | { is_closed: true };
export type WeekSchedule = Record<Weekday, DaySchedule>;

export interface BusinessHours {
  timezone: string;
  schedule: WeekSchedule;
}

export interface HolidayDate {
  /** `YYYY-MM-DD`, a local date in the business-hours timezone. */
  date: string;
  /** Repeats every year on that month and day. */
  recurring: boolean;
}

/** Half-open `[start, end)` in epoch milliseconds; `end` may be Infinity (a pause still running). */
export interface Interval {
  start: number;
  end: number;
}

const MINUTE = 60_000;
const DAY = 86_400_000;
/** How far ahead a due time is searched before the answer is "never" (a calendar with no open day). */
const HORIZON_DAYS = 366 * 5;

export const DEFAULT_BUSINESS_HOURS: BusinessHours = {
  timezone: 'UTC',
  schedule: {
    monday: { open: '09:00', close: '17:00' },
    tuesday: { open: '09:00', close: '17:00' },
    wednesday: { open: '09:00', close: '17:00' },
    thursday: { open: '09:00', close: '17:00' },
    friday: { open: '09:00', close: '17:00' },
    saturday: { is_closed: true },
    sunday: { is_closed: true },
  },
};

/** `HH:MM` from 00:00 to 23:59, or exactly `24:00` (end of the day; only meaningful as a close). */
export const TIME_OF_DAY = /^(([01]\d|2[0-3]):[0-5]\d|24:00)$/;

export function minutesOfDay(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
}

/** What is wrong with a business-hours definition, as `[field, message]` pairs; empty when fine. */
export function businessHoursProblems(hours: BusinessHours, prefix = 'schedule.'): Array<[string, string]> {
  const problems: Array<[string, string]> = [];
  if (!IANAZone.isValidZone(hours.timezone)) problems.push(['timezone', 'is not an IANA time zone']);
  for (const day of WEEKDAYS) {
    const d = hours.schedule[day];
    if (!d || 'is_closed' in d) continue;
    if (!TIME_OF_DAY.test(d.open) || d.open === '24:00') problems.push([`${prefix}${day}.open`, 'must be HH:MM between 00:00 and 23:59']);
    else if (!TIME_OF_DAY.test(d.close)) problems.push([`${prefix}${day}.close`, 'must be HH:MM between 00:01 and 24:00']);
    else if (minutesOfDay(d.close) <= minutesOfDay(d.open)) problems.push([`${prefix}${day}.close`, 'must be later than open']);
  }
  return problems;
}

/** The instants that count, before pauses. */
export interface Calendar {
  /** Open spans `[start, end)` from `from` on, in order, clipped to start at `from` at the earliest. */
  spans(from: number): Iterable<Interval>;
}

/** Calendar time: every instant counts, holidays are ignored. */
export const ALWAYS_OPEN: Calendar = {
  *spans(from: number) {
    yield { start: from, end: Infinity };
  },
};

/**
 * A zone's UTC offset in minutes at an instant, memoised per quarter hour (shared by every
 * calendar of the process: Intl-backed offset look-ups are the calendar's main cost). A bucket is
 * cached only when its first and last millisecond agree, so the answer stays exact whatever the
 * zone: two transitions never fall within 15 minutes of each other.
 */
const QUARTER = 15 * MINUTE;
const offsetMemo = new Map<string, Map<number, number>>();
function zoneOffset(zone: IANAZone, at: number): number {
  let memo = offsetMemo.get(zone.name);
  if (!memo) offsetMemo.set(zone.name, (memo = new Map()));
  const bucket = Math.floor(at / QUARTER);
  const known = memo.get(bucket);
  if (known !== undefined) return known;
  const first = zone.offset(bucket * QUARTER);
  const last = zone.offset((bucket + 1) * QUARTER - 1);
  if (first !== last) return zone.offset(at);
  if (memo.size > 200_000) memo.clear();
  memo.set(bucket, first);
  return first;
}

export class BusinessCalendar implements Calendar {
  private readonly fixed = new Set<string>();
  private readonly yearly = new Set<string>();
  /** Open window of each local day (by days since 1970-01-01), or null when the day is closed. */
  private readonly cache = new Map<number, Interval | null>();
  private readonly openAny: boolean;
  /** Opening minutes per weekday, index 0 = Sunday as Date#getUTCDay counts. */
  private readonly week: Array<{ open: number; close: number } | null>;
  private readonly zone: IANAZone;

  constructor(hours: BusinessHours, holidays: readonly HolidayDate[] = []) {
    for (const h of holidays) {
      if (h.recurring) this.yearly.add(h.date.slice(5));
      else this.fixed.add(h.date);
    }
    const order: Weekday[] = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
    this.week = order.map((name) => {
      const d = hours.schedule[name];
      if (!d || 'is_closed' in d) return null;
      return { open: minutesOfDay(d.open), close: minutesOfDay(d.close) };
    });
    this.openAny = this.week.some((d) => d !== null);
    this.zone = IANAZone.create(hours.timezone);
  }

  /** The open window of a local day, as instants; DST days come out longer or shorter. */
  private window(dayNo: number): Interval | null {
    const cached = this.cache.get(dayNo);
    if (cached !== undefined) return cached;
    const date = new Date(dayNo * DAY);
    const iso = date.toISOString().slice(0, 10);
    const hours = this.week[date.getUTCDay()];
    let result: Interval | null = null;
    if (hours && !this.fixed.has(iso) && !this.yearly.has(iso.slice(5))) {
      result = { start: this.localInstant(dayNo, hours.open), end: this.localInstant(dayNo, hours.close) };
      // A window lost entirely in a spring-forward gap (say 02:00–02:30) is simply empty.
      if (result.end <= result.start) result = null;
    }
    if (this.cache.size > 20_000) this.cache.clear();
    this.cache.set(dayNo, result);
    return result;
  }

  /**
   * The instant of a local wall-clock time (minutes after local midnight of day `dayNo`; 1440 is
   * the next midnight). A time skipped by a spring-forward gap moves forward by the gap; an
   * ambiguous fall-back time takes the earlier of its two instants. This is luxon's
   * offset-fixing step, seeded with the offset of the day before: luxon's own `fromObject` seeds
   * it with the offset in force now, which would make an ambiguous time depend on the wall
   * clock, and costs several times more.
   */
  private localInstant(dayNo: number, minutes: number): number {
    const wall = dayNo * DAY + minutes * MINUTE;
    const o1 = zoneOffset(this.zone, wall - DAY);
    let guess = wall - o1 * MINUTE;
    const o2 = zoneOffset(this.zone, guess);
    if (o1 === o2) return guess;
    guess -= (o2 - o1) * MINUTE;
    const o3 = zoneOffset(this.zone, guess);
    if (o2 === o3) return guess;
    return wall - Math.min(o2, o3) * MINUTE;
  }

  *spans(from: number): Iterable<Interval> {
    if (!this.openAny) return;
    // The local day of `from`, started one day early: a window never crosses local midnight, and
    // starting from the day before costs one cached lookup.
    let dayNo = Math.floor((from + zoneOffset(this.zone, from) * MINUTE) / DAY) - 1;
    for (let i = 0; i < HORIZON_DAYS; i++, dayNo++) {
      const w = this.window(dayNo);
      if (!w || w.end <= from) continue;
      yield { start: Math.max(w.start, from), end: w.end };
    }
  }
}

export function calendarFor(respectBusinessHours: boolean, hours: BusinessHours, holidays: readonly HolidayDate[]): Calendar {
  return respectBusinessHours ? new BusinessCalendar(hours, holidays) : ALWAYS_OPEN;
}

/** Sorted, merged pause intervals (overlaps and touching intervals joined). */
export function normalisePauses(pauses: readonly Interval[]): Interval[] {
  const sorted = pauses.filter((p) => p.end > p.start).sort((a, b) => a.start - b.start);
  const merged: Interval[] = [];
  for (const p of sorted) {
    const last = merged[merged.length - 1];
    if (last && p.start <= last.end) last.end = Math.max(last.end, p.end);
    else merged.push({ ...p });
  }
  return merged;
}

/** The spans that count: the calendar's open spans minus the pauses. */
export function* countedSpans(from: number, calendar: Calendar, pauses: readonly Interval[] = []): Iterable<Interval> {
  const ps = normalisePauses(pauses);
  let pi = 0;
  for (const span of calendar.spans(from)) {
    let start = span.start;
    while (start < span.end) {
      while (pi < ps.length && ps[pi]!.end <= start) pi++;
      const p = ps[pi];
      if (!p || p.start >= span.end) {
        yield { start, end: span.end };
        break;
      }
      if (p.start > start) yield { start, end: p.start };
      if (p.end === Infinity) return; // paused for good: nothing ever counts again
      start = p.end;
    }
  }
}

/**
 * The instant at which the counted time since `start` reaches `ms` milliseconds, or null when it
 * never does (a running pause, or a calendar with no open day).
 */
export function dueAtMs(start: number, ms: number, calendar: Calendar, pauses: readonly Interval[] = []): number | null {
  if (ms <= 0) return start;
  let remaining = ms;
  for (const span of countedSpans(start, calendar, pauses)) {
    const length = span.end - span.start;
    if (remaining <= length) return span.start + remaining;
    remaining -= length;
  }
  return null;
}

/** Counted milliseconds in `[from, to)`. */
export function countedMs(from: number, to: number, calendar: Calendar, pauses: readonly Interval[] = []): number {
  if (to <= from) return 0;
  let total = 0;
  for (const span of countedSpans(from, calendar, pauses)) {
    if (span.start >= to) break;
    total += Math.min(span.end, to) - span.start;
    if (span.end >= to) break;
  }
  return total;
}

/** `dueAtMs` in the policy's unit. */
export function dueAt(start: Date, minutes: number, calendar: Calendar, pauses: readonly Interval[] = []): Date | null {
  const due = dueAtMs(start.getTime(), minutes * MINUTE, calendar, pauses);
  return due === null ? null : new Date(due);
}

/** `countedMs` in minutes (fractional when the span is not whole minutes). */
export function countedMinutes(from: Date, to: Date, calendar: Calendar, pauses: readonly Interval[] = []): number {
  return countedMs(from.getTime(), to.getTime(), calendar, pauses) / MINUTE;
}
