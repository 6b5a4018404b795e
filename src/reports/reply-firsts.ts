/**
 * When a public staff reply is its ticket's first in a local bucket (docs/reports.md "Distinct
 * tickets by day, hour and weekday"), as SQL over a `report_reply_gaps` row: `prev_at` is the
 * ticket's previous reply, `earlier_hours` the hours of the week (UTC) of all its earlier ones.
 * The rollup job evaluates these for every local day (week) start a whole number of hours
 * (j = 0..25, 0..169) before the reply's hour; a read evaluates them with the day (week) start of
 * its zone. Both must agree, so both take them from here.
 */

/**
 * Hours from a local day's start to the start of the reply's hour, rolled up: 0..25. A day is 25
 * hours long when the clocks go back an hour, 26 when they go back two (Antarctica/Troll); a zone
 * with a longer day in the window is read another way (zone-offsets.ts `dayHoursFit`).
 */
export const DAY_HOURS = 26;
/** Hours from a local week's start to the start of the reply's hour: 0..169 (a 26-hour day in it). */
export const WEEK_HOURS = 170;

/** First of its local day (week), the one starting at `start`: no earlier reply since then. */
export const firstSince = (g: string, start: string) => `(${g}.prev_at IS NULL OR ${g}.prev_at < ${start})`;

/**
 * First of its UTC hour of the day: no earlier reply at that hour of the day, on any day. In a
 * stretch of constant whole-hour offset the UTC hour of the day names the local one.
 */
export const firstOfHour = (g: string) =>
  `(${g}.prev_at IS NULL OR report_hour_of_day_clear(${g}.earlier_hours, mod(report_hour_of_week(${g}.at), 24)))`;

/**
 * First of its local weekday, the day starting at `dayStart` and `hoursIn` whole hours before the
 * reply's hour: no earlier reply in the 24 hours of the week from the day's start (every earlier
 * same weekday, in a stretch of constant offset), nor in the day's own hours up to the reply's
 * (25 or 26 on a day the clocks go back).
 */
export const firstOfWeekday = (g: string, dayStart: string, hoursIn: string) =>
  `(${g}.prev_at IS NULL OR report_hours_clear(${g}.earlier_hours, report_hour_of_week(${dayStart}), greatest(24, ${hoursIn} + 1)))`;

/** The start of the local day (or `unit`: week) of an instant, in `tz` (a checked zone name). */
export const localDayStart = (at: string, tz: string, unit: 'day' | 'week' = 'day') =>
  `(date_trunc('${unit}', ${at} AT TIME ZONE '${tz}') AT TIME ZONE '${tz}')`;

/** Whole hours from `dayStart` to the start of the UTC hour of `at`. */
export const hoursInto = (at: string, dayStart: string) =>
  `(extract(epoch FROM date_trunc('hour', ${at}, 'UTC') - ${dayStart}) / 3600)::int`;

/**
 * The rollup columns of one hour's replies (alias `g`, the hour's start `hour`): for each j, the
 * day start is `hour - j hours`.
 */
export function rollupCounts(g: string, hour: string): { dayFirsts: string; hourFirsts: string; wdayFirsts: string } {
  const js = Array.from({ length: DAY_HOURS }, (_, j) => j);
  const start = (j: number) => `(${hour} - interval '${j} hours')`;
  return {
    dayFirsts: `ARRAY[${js.map((j) => `count(*) FILTER (WHERE ${firstSince(g, start(j))})`).join(', ')}]::int[]`,
    hourFirsts: `count(*) FILTER (WHERE ${firstOfHour(g)})::int`,
    wdayFirsts: `ARRAY[${js.map((j) => `count(*) FILTER (WHERE ${firstOfWeekday(g, start(j), String(j))})`).join(', ')}]::int[]`,
  };
}

/**
 * The totals of rollup rows `h` (one hour's teams and channels): replies, hour flags and weekday
 * flags summed, the arrays element by element (the day flags come with the week flags).
 */
export function rollupTotals(): string {
  const wday = `ARRAY[${Array.from({ length: DAY_HOURS }, (_, i) => `sum(h.wday_firsts[${i + 1}])`).join(', ')}]::int[]`;
  return `sum(h.replies)::int, sum(h.hour_firsts)::int, ${wday}`;
}

/**
 * Whole hours from the previous reply to the start of the reply's hour `hour`, rounded up and
 * capped at WEEK_HOURS (also for no previous reply): the reply is first since a start j hours
 * before its hour exactly when this exceeds j (`firstSince`). The totals' week flags, whose first
 * DAY_HOURS entries are the day flags, are rolled up from it.
 */
export const hoursSincePrevious = (g: string, hour: string) =>
  `CASE WHEN ${g}.prev_at IS NULL THEN ${WEEK_HOURS}
        ELSE least(${WEEK_HOURS}, greatest(0, ceil(extract(epoch FROM ${hour} - ${g}.prev_at) / 3600)))::int END`;
