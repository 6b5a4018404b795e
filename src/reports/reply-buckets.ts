import type { Ctx } from '../core/context.js';
import { gapKeys, type RolledSource } from './catalog-rollups.js';
import { hasTicketFilter, type Filters } from './filters.js';
import { firstOfHour, firstOfWeekday, firstSince, hoursInto, localDayStart } from './reply-firsts.js';
import { rollupFilter, type Coverage } from './rollup.js';
import { offsetChanges } from './zone-offsets.js';

/**
 * `agent_replies` by local day, local hour of the day, local weekday and (without a filter) local
 * week (docs/reports.md "Distinct tickets by day, hour and weekday"): the distinct tickets replied
 * to in each bucket, exact, from the hourly reply rollups.
 *
 * Every reply carries a flag, "first of its ticket in its bucket" (reply-firsts.ts), computed from
 * the ticket's earlier replies. For a ticket whose replies up to the window's end all lie in the
 * window and in one stretch of constant UTC offset, its flags count each of its buckets exactly
 * once. The rollups sum the flags per hour (`report_rollup_reply_hours` per team and channel,
 * `report_rollup_reply_totals` without a filter; each hour's distance from its local day's start
 * computed once per hour); the live ranges (edge hours, dirty hours, hours not
 * rolled up yet) compute them row by row. The other tickets — under way at the window's start, or
 * (by hour and weekday) replied to on both sides of an offset change — are found by one GiST probe
 * per such instant on the reply gaps; their flags are taken back and their buckets counted one by
 * one. Columns: at, n, firsts (the `agent_replies` sums).
 */
export type ReplyBucket = 'day' | 'hour' | 'weekday' | 'week';
export const REPLY_BUCKETS: readonly string[] = ['day', 'hour', 'weekday'];
/** By local week only the totals are rolled (170 flags an hour): runs without a filter. */
export const replyWeeksRolled = (groupBy: string, f: Filters) => groupBy === 'week' && !hasTicketFilter(f);

/** The bucket of an instant, as the catalog's dimension names it (its group key). */
const bucketOf = (at: string, tz: string, by: ReplyBucket) => ({
  day: `date_trunc('day', ${at} AT TIME ZONE '${tz}')`,
  hour: `extract(hour FROM ${at} AT TIME ZONE '${tz}')`,
  weekday: `extract(isodow FROM ${at} AT TIME ZONE '${tz}')`,
  week: `date_trunc('week', ${at} AT TIME ZONE '${tz}')`,
})[by];

/** A reply row's flag, evaluated with its own local day start. */
function flag(g: string, tz: string, by: ReplyBucket): string {
  const dayStart = localDayStart(`${g}.at`, tz);
  if (by === 'day') return firstSince(g, dayStart);
  if (by === 'week') return firstSince(g, localDayStart(`${g}.at`, tz, 'week'));
  if (by === 'hour') return firstOfHour(g);
  return firstOfWeekday(g, dayStart, hoursInto(`${g}.at`, dayStart));
}

/**
 * The rolled-up flags of the rows `h` of an hour `hr`: but by hour, those for its hours `hr.j` from
 * the local day's (week's) start. The totals' day flags are the first entries of their week flags.
 */
function rolledFlags(by: ReplyBucket, totals: boolean): string {
  if (by === 'hour') return 'h.hour_firsts';
  const column = { day: totals ? 'h.week_firsts' : 'h.day_firsts', weekday: 'h.wday_firsts', week: 'h.week_firsts' }[by];
  return `${column}[hr.j + 1]`;
}

/**
 * The rows of a run in a zone a whole number of hours off UTC all through the window (the rollups
 * count per UTC hour, and each lies in one local hour).
 */
export function replyBuckets(ctx: Ctx, f: Filters, cov: Coverage, by: ReplyBucket): RolledSource {
  const rf = rollupFilter(f);
  // Without a filter the per-hour totals: a row per hour instead of one per team and channel (by
  // week the only ones kept).
  const filtered = hasTicketFilter(f);
  if (by === 'week' && filtered) throw new Error('agent_replies by week from rollups needs the totals: no filter');
  const keys = gapKeys(f, 'day');
  // By day and week a flag reads only the previous reply, so only the window's start splits a
  // ticket; by hour and weekday every offset change does too.
  const splits = [f.from, ...(by === 'day' || by === 'week' ? [] : offsetChanges(f.tz, f.from, f.to))];
  return {
    sql: `
      SELECT hr.at, sum(h.replies)::int AS n, sum(${rolledFlags(by, !filtered)})::int AS firsts
        FROM (SELECT a.at, ${hoursInto('a.at', localDayStart('a.at', f.tz, by === 'week' ? 'week' : 'day'))} AS j
                FROM (SELECT ?::timestamptz + i * interval '1 hour' AS at FROM generate_series(0, ?::int - 1) AS i) a) hr
        JOIN ${filtered ? 'report_rollup_reply_hours' : 'report_rollup_reply_totals'} h
          ON h.tenant_id = ? AND h.hour = hr.at AND h.hour >= ? AND h.hour < ?${rf.sql}
       WHERE hr.at <> ALL(?::timestamptz[])
       GROUP BY hr.at
      UNION ALL
      SELECT g.at, 1, ${flag('g', f.tz, by)}::int
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN report_reply_gaps g ON g.tenant_id = ? AND g.at >= r.a AND g.at < r.b${keys.join}
      UNION ALL
      SELECT s.at, 0, s.firsts FROM (
        WITH split AS (
          SELECT DISTINCT g.ticket_id
            FROM unnest(?::timestamptz[]) AS b(at)
            JOIN report_reply_gaps g ON g.tenant_id = ? AND g.prev_at IS NOT NULL AND tstzrange(g.prev_at, g.at, '(]') @> b.at
             -- "ends before the window's end" as a range operator too, so the index rejects longer gaps itself.
             AND tstzrange(g.prev_at, g.at, '(]') &< tstzrange(b.at, ?::timestamptz, '[)') AND g.at < ?${keys.join}
        ), theirs AS MATERIALIZED (
          SELECT g.* FROM split s JOIN report_reply_gaps g ON g.tenant_id = ? AND g.ticket_id = s.ticket_id AND g.at >= ? AND g.at < ?
        )
        SELECT g.at, -(${flag('g', f.tz, by)})::int AS firsts FROM theirs g
        UNION ALL
        SELECT min(g.at), 1 FROM theirs g GROUP BY g.ticket_id, ${bucketOf('g.at', f.tz, by)}
      ) s`,
    bindings: [cov.lo, Math.max(0, Math.round((cov.hi.getTime() - cov.lo.getTime()) / 3_600_000)), ctx.tenantId, cov.lo, cov.hi, ...rf.bindings, cov.dirty,
      cov.live.starts, cov.live.ends, ctx.tenantId, ...keys.bindings,
      splits, ctx.tenantId, f.to, f.to, ...keys.bindings, ctx.tenantId, f.from, f.to],
  };
}

/**
 * By local day in a zone off the whole hour, from the reply gaps alone (no rollup, no probe): a
 * reply is its ticket's first in its day's part of the window exactly when the ticket's previous
 * reply is before that part's start, the later of the local day's start and the window's. One pass
 * over the window's replies in the gaps' covering index (`report_reply_gaps_at`).
 */
export function replyDays(ctx: Ctx, f: Filters): RolledSource {
  const keys = gapKeys(f, 'day');
  return {
    sql: `SELECT g.at, 1 AS n, ${firstSince('g', `greatest(${localDayStart('g.at', f.tz)}, ?::timestamptz)`)}::int AS firsts
        FROM report_reply_gaps g${keys.join}
       WHERE g.tenant_id = ? AND g.at >= ? AND g.at < ?`,
    bindings: [f.from, ...keys.bindings, ctx.tenantId, f.from, f.to],
  };
}
