import t from 'tap';
import fc from 'fast-check';
import {
  ALWAYS_OPEN, BusinessCalendar, DEFAULT_BUSINESS_HOURS, businessHoursProblems, countedMinutes, countedMs, dueAt, dueAtMs,
  type BusinessHours, type HolidayDate, type Interval, type WeekSchedule,
} from '../../../src/sla/calendar.js';

const MIN = 60_000;
const iso = (d: Date | null) => (d === null ? null : d.toISOString());
const at = (s: string) => new Date(s);
const nine5 = (timezone: string, extra: Partial<WeekSchedule> = {}): BusinessHours => ({
  timezone, schedule: { ...DEFAULT_BUSINESS_HOURS.schedule, ...extra },
});
const everyDay = (open: string, close: string): WeekSchedule => ({
  monday: { open, close }, tuesday: { open, close }, wednesday: { open, close }, thursday: { open, close },
  friday: { open, close }, saturday: { open, close }, sunday: { open, close },
});

t.test('business hours: the table of edge cases', async (t) => {
  const utc = new BusinessCalendar(DEFAULT_BUSINESS_HOURS);
  const cases: Array<[string, BusinessCalendar, string, number, string | null]> = [
    ['inside hours', utc, '2026-11-23T10:00:00Z', 60, '2026-11-23T11:00:00.000Z'],
    ['exactly at close', utc, '2026-11-23T16:00:00Z', 60, '2026-11-23T17:00:00.000Z'],
    ['created before opening', utc, '2026-11-23T06:30:00Z', 15, '2026-11-23T09:15:00.000Z'],
    ['created after closing', utc, '2026-11-23T18:00:00Z', 60, '2026-11-24T10:00:00.000Z'],
    ['created on a Saturday', utc, '2026-11-28T12:00:00Z', 30, '2026-11-30T09:30:00.000Z'],
    ['Friday evening to Monday', utc, '2026-11-27T16:00:00Z', 120, '2026-11-30T10:00:00.000Z'],
    ['several days', utc, '2026-11-23T09:00:00Z', 1440, '2026-11-25T17:00:00.000Z'],
    ['a week-end inside', utc, '2026-11-26T09:00:00Z', 2880, '2026-12-03T17:00:00.000Z'],
  ];
  for (const [name, cal, start, minutes, expected] of cases) t.equal(iso(dueAt(at(start), minutes, cal)), expected, name);
});

t.test('holidays: fixed, consecutive and yearly recurring close the whole local day', async (t) => {
  const holidays: HolidayDate[] = [
    { date: '2026-12-24', recurring: false }, { date: '2026-12-25', recurring: true }, { date: '2020-12-28', recurring: true },
  ];
  const cal = new BusinessCalendar(DEFAULT_BUSINESS_HOURS, holidays);
  // Wed 23 Dec 16:00, 2 h: 1 h on the 23rd, then Thu 24 + Fri 25 (holidays), week-end, Mon 28 (recurring) → Tue 29 10:00.
  t.equal(iso(dueAt(at('2026-12-23T16:00:00Z'), 120, cal)), '2026-12-29T10:00:00.000Z');
  t.equal(countedMinutes(at('2026-12-23T16:00:00Z'), at('2026-12-29T10:00:00Z'), cal), 120);
  // Next year the recurring ones still close; the one-off does not.
  t.equal(iso(dueAt(at('2027-12-24T16:00:00Z'), 120, cal)), '2027-12-27T10:00:00.000Z', '24th open in 2027, 25th a Saturday anyway');
  t.equal(iso(dueAt(at('2028-12-24T12:00:00Z'), 60, cal)), '2028-12-26T10:00:00.000Z', '25 Dec 2028 is a Monday, closed');
  // A holiday is a local day in the business-hours zone, not a UTC day.
  const tokyo = new BusinessCalendar(nine5('Asia/Tokyo'), [{ date: '2026-11-24', recurring: false }]);
  // Mon 23 Nov 17:00 JST = 08:00Z; next open is Wed 25 09:00 JST = 00:00Z.
  t.equal(iso(dueAt(at('2026-11-23T08:00:00Z'), 30, tokyo)), '2026-11-25T00:30:00.000Z');
});

t.test('24/7 ignores holidays and counts real elapsed time across DST', async (t) => {
  t.equal(iso(dueAt(at('2026-12-24T23:00:00Z'), 120, ALWAYS_OPEN)), '2026-12-25T01:00:00.000Z');
  // Europe/Berlin falls back on 25 Oct 2026 at 03:00 CEST: 240 elapsed minutes are 240 minutes.
  t.equal(iso(dueAt(at('2026-10-25T00:00:00Z'), 240, ALWAYS_OPEN)), '2026-10-25T04:00:00.000Z');
  t.equal(iso(dueAt(at('2026-03-29T00:30:00Z'), 60, ALWAYS_OPEN)), '2026-03-29T01:30:00.000Z');
});

t.test('DST: windows are local wall-clock windows, so the changeover days are longer or shorter', async (t) => {
  // Open every day 00:00–24:00 local: a spring-forward day counts 23 h, a fall-back day 25 h.
  const zones: Array<[string, string, string, string, string]> = [
    // zone, spring day start (UTC), next day start (UTC), fall day start (UTC), next day start (UTC)
    ['America/New_York', '2026-03-08T05:00:00Z', '2026-03-09T04:00:00Z', '2026-11-01T04:00:00Z', '2026-11-02T05:00:00Z'],
    ['Europe/Berlin', '2026-03-28T23:00:00Z', '2026-03-29T22:00:00Z', '2026-10-24T22:00:00Z', '2026-10-25T23:00:00Z'],
    ['Australia/Sydney', '2026-10-03T14:00:00Z', '2026-10-04T13:00:00Z', '2026-04-04T13:00:00Z', '2026-04-05T14:00:00Z'],
    ['America/Santiago', '2026-09-06T04:00:00Z', '2026-09-07T03:00:00Z', '2026-04-04T03:00:00Z', '2026-04-05T04:00:00Z'],
  ];
  for (const [zone, springStart, springNext, fallStart, fallNext] of zones) {
    const cal = new BusinessCalendar({ timezone: zone, schedule: everyDay('00:00', '24:00') });
    t.equal(countedMinutes(at(springStart), at(springNext), cal), 23 * 60, `${zone} spring-forward day is 23 h`);
    t.equal(countedMinutes(at(fallStart), at(fallNext), cal), 25 * 60, `${zone} fall-back day is 25 h`);
    t.equal(iso(dueAt(at(springStart), 23 * 60, cal)), new Date(springNext).toISOString(), `${zone} due at the end of the short day`);
    t.equal(iso(dueAt(at(fallStart), 25 * 60, cal)), new Date(fallNext).toISOString(), `${zone} due at the end of the long day`);
  }
  // 09:00–17:00 in New York: the same local hours on both sides of the change, at different UTC instants.
  const ny = new BusinessCalendar(nine5('America/New_York'));
  t.equal(iso(dueAt(at('2026-03-06T21:00:00Z'), 120, ny)), '2026-03-09T14:00:00.000Z', 'Fri 16:00 EST + 2 h → Mon 10:00 EDT');
  t.equal(iso(dueAt(at('2026-10-30T20:00:00Z'), 120, ny)), '2026-11-02T15:00:00.000Z', 'Fri 16:00 EDT + 2 h → Mon 10:00 EST');
  // A window that opens inside the spring-forward gap starts when the gap ends.
  const gap = new BusinessCalendar({ timezone: 'America/New_York', schedule: everyDay('02:30', '04:00') });
  t.equal(countedMinutes(at('2026-03-08T05:00:00Z'), at('2026-03-09T05:00:00Z'), gap), 30, '02:30 does not exist: 03:30–04:00');
  t.equal(countedMinutes(at('2026-11-01T04:00:00Z'), at('2026-11-02T05:00:00Z'), gap), 90, 'after the fall-back 02:30–04:00 is unambiguous: 90 min');
});

t.test('close of 24:00 runs to local midnight', async (t) => {
  const late = new BusinessCalendar(nine5('Europe/Paris', { monday: { open: '18:00', close: '24:00' } }));
  // Mon 23 Nov 2026 18:00 CET = 17:00Z; 6 h → midnight = 23:00Z.
  t.equal(iso(dueAt(at('2026-11-23T17:00:00Z'), 360, late)), '2026-11-23T23:00:00.000Z');
  t.equal(iso(dueAt(at('2026-11-23T17:00:00Z'), 361, late)), '2026-11-24T08:01:00.000Z');
});

t.test('pauses never count, across nights, week-ends and holidays', async (t) => {
  const cal = new BusinessCalendar(DEFAULT_BUSINESS_HOURS, [{ date: '2026-11-26', recurring: false }]);
  const pause: Interval = { start: at('2026-11-24T16:00:00Z').getTime(), end: at('2026-11-27T10:00:00Z').getTime() };
  // Start Tue 15:00, 3 h: 1 h Tue, paused through Wed, holiday Thu, resumes Fri 10:00 → 12:00.
  t.equal(iso(dueAt(at('2026-11-24T15:00:00Z'), 180, cal, [pause])), '2026-11-27T12:00:00.000Z');
  t.equal(countedMinutes(at('2026-11-24T15:00:00Z'), at('2026-11-27T12:00:00Z'), cal, [pause]), 180);
  // A running pause: never due.
  t.equal(dueAt(at('2026-11-24T15:00:00Z'), 180, cal, [{ start: pause.start, end: Infinity }]), null);
  // 24/7 with a pause over the night.
  const night: Interval = { start: at('2026-11-24T20:00:00Z').getTime(), end: at('2026-11-25T08:00:00Z').getTime() };
  t.equal(iso(dueAt(at('2026-11-24T19:00:00Z'), 120, ALWAYS_OPEN, [night])), '2026-11-25T09:00:00.000Z');
  // Overlapping and unsorted pauses merge.
  const parts = [{ start: night.start + 3600_000, end: night.end }, { start: night.start, end: night.start + 7200_000 }];
  t.equal(iso(dueAt(at('2026-11-24T19:00:00Z'), 120, ALWAYS_OPEN, parts)), '2026-11-25T09:00:00.000Z');
});

t.test('a schedule with no open day is never due; validation names the field', async (t) => {
  const closed = new BusinessCalendar({ timezone: 'UTC', schedule: { ...everyDay('09:00', '17:00'), ...Object.fromEntries(
    ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((d) => [d, { is_closed: true }])) } });
  t.equal(dueAt(at('2026-11-23T10:00:00Z'), 1, closed), null);
  t.same(businessHoursProblems({ timezone: 'Mars/Olympus', schedule: { ...DEFAULT_BUSINESS_HOURS.schedule, monday: { open: '17:00', close: '09:00' } } }),
    [['timezone', 'is not an IANA time zone'], ['schedule.monday.close', 'must be later than open']]);
  t.same(businessHoursProblems(nine5('UTC', { friday: { open: '24:00', close: '24:00' } })), [['schedule.friday.open', 'must be HH:MM between 00:00 and 23:59']]);
  t.same(businessHoursProblems(nine5('UTC', { friday: { open: '00:00', close: '24:00' } })), []);
});

// ---- properties -------------------------------------------------------------------------------

const ZONES = ['UTC', 'America/New_York', 'Europe/Berlin', 'Australia/Sydney', 'Asia/Kolkata', 'America/Santiago', 'Pacific/Chatham'];
const time = fc.integer({ min: 0, max: 47 }).map((h) => `${String(Math.floor(h / 2)).padStart(2, '0')}:${h % 2 ? '30' : '00'}`);
const day = fc.oneof(
  fc.constant({ is_closed: true as const }),
  fc.tuple(time, time).filter(([a, b]) => a !== b).map(([a, b]) => (a < b ? { open: a, close: b } : { open: b, close: a === '00:00' ? '24:00' : a })),
);
const hoursArb = fc.record({
  timezone: fc.constantFrom(...ZONES),
  schedule: fc.record({ monday: day, tuesday: day, wednesday: day, thursday: day, friday: day, saturday: day, sunday: day }),
});
const START = Date.UTC(2026, 0, 1);
const instant = fc.integer({ min: 0, max: 730 * 24 * 60 }).map((m) => START + m * MIN);
const holidaysArb = fc.array(fc.record({
  date: fc.integer({ min: 0, max: 730 }).map((d) => new Date(START + d * 86_400_000).toISOString().slice(0, 10)), recurring: fc.boolean(),
}), { maxLength: 8 });
const pausesArb = fc.array(fc.tuple(instant, fc.integer({ min: 1, max: 5 * 24 * 60 })).map(([s, l]) => ({ start: s, end: s + l * MIN })), { maxLength: 4 });
const calendarArb = fc.oneof(
  { weight: 1, arbitrary: fc.constant(ALWAYS_OPEN) },
  { weight: 4, arbitrary: fc.tuple(hoursArb, holidaysArb).map(([h, hol]) => new BusinessCalendar(h, hol)) },
);

t.test('property: the counted time up to the due instant is exactly the target', async () => {
  fc.assert(fc.property(calendarArb, instant, fc.integer({ min: 0, max: 5000 }), pausesArb, (cal, start, minutes, pauses) => {
    const due = dueAtMs(start, minutes * MIN, cal, pauses);
    if (due === null) return true;
    return countedMs(start, due, cal, pauses) === minutes * MIN && due >= start;
  }), { numRuns: 300 });
});

t.test('property: the due instant is the earliest one (nothing counts just before it is reached)', async () => {
  fc.assert(fc.property(calendarArb, instant, fc.integer({ min: 1, max: 5000 }), pausesArb, (cal, start, minutes, pauses) => {
    const due = dueAtMs(start, minutes * MIN, cal, pauses);
    if (due === null) return true;
    return countedMs(start, due - 1, cal, pauses) < minutes * MIN;
  }), { numRuns: 300 });
});

t.test('property: due from counted is at or before the instant (inverse), and both are monotonic', async () => {
  fc.assert(fc.property(calendarArb, instant, instant, instant, pausesArb, (cal, a, b, c, pauses) => {
    const [start, t1, t2] = [a, b, c].sort((x, y) => x - y) as [number, number, number];
    const c1 = countedMs(start, t1, cal, pauses);
    const c2 = countedMs(start, t2, cal, pauses);
    if (c1 > c2) return false;
    const back = dueAtMs(start, c1, cal, pauses);
    if (back === null || back > t1 || countedMs(start, back, cal, pauses) !== c1) return false;
    const d1 = dueAtMs(start, Math.floor(c1 / MIN) * MIN, cal, pauses);
    const d2 = dueAtMs(start, Math.floor(c2 / MIN) * MIN, cal, pauses);
    return d1 !== null && d2 !== null && d1 <= d2;
  }), { numRuns: 300 });
});

t.test('property: counted time is additive over a split point', async () => {
  fc.assert(fc.property(calendarArb, instant, instant, instant, pausesArb, (cal, a, b, c, pauses) => {
    const [x, y, z] = [a, b, c].sort((p, q) => p - q) as [number, number, number];
    return countedMs(x, y, cal, pauses) + countedMs(y, z, cal, pauses) === countedMs(x, z, cal, pauses);
  }), { numRuns: 300 });
});
