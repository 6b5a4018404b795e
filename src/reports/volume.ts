import type { Ctx } from '../core/context.js';
import { iso, ticketFilter, type Filters } from './filters.js';
import { coverage, coveredSql, inReportSnapshot, rollupFilter } from './rollup.js';
import { wholeHourZone } from './zone-offsets.js';

export type Interval = 'day' | 'week' | 'month';
export const INTERVALS: readonly Interval[] = ['day', 'week', 'month'];

/**
 * Tickets created and resolved per local day, week or month of `tz`. Every bucket that meets the
 * window is listed, empty ones with zeros; the first may start before `from`, but only the window
 * is counted. Local buckets follow the zone's clock: a DST day is 23 or 25 hours long.
 */
export function volume(ctx: Ctx, f: Filters, interval: Interval) {
  return inReportSnapshot(ctx, (ctx) => volumeIn(ctx, f, interval));
}

async function volumeIn(ctx: Ctx, f: Filters, interval: Interval) {
  const filter = ticketFilter(f);
  const tz = f.tz;
  const cov = await coverage(ctx, f.from, f.to, wholeHourZone(tz, f.from, f.to));
  const covered = coveredSql(ctx, cov);
  const rf = rollupFilter(f);
  const r = [cov.live.starts, cov.live.ends];
  // Each count: the covered rollup hours re-bucketed into local buckets, plus the live ranges.
  const result = await ctx.trx.raw(`
    WITH buckets AS (
      SELECT generate_series(date_trunc('${interval}', ?::timestamptz AT TIME ZONE ?),
                             (?::timestamptz - interval '1 microsecond') AT TIME ZONE ?,
                             interval '1 ${interval}') AS local
    ), rolled AS (
      SELECT date_trunc('${interval}', h.hour AT TIME ZONE ?) AS local, sum(h.created) AS created, sum(h.resolved) AS resolved
        FROM report_rollup_hours h
       WHERE ${covered.sql}${rf.sql}
       GROUP BY 1
    ), created AS (
      SELECT date_trunc('${interval}', t.created_at AT TIME ZONE ?) AS local, count(*) AS n
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN tickets t ON t.tenant_id = ? AND t.created_at >= r.a AND t.created_at < r.b${filter.sql}
       GROUP BY 1
    ), resolved AS (
      SELECT date_trunc('${interval}', t.resolved_at AT TIME ZONE ?) AS local, count(*) AS n
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN tickets t ON t.tenant_id = ? AND t.resolved_at >= r.a AND t.resolved_at < r.b${filter.sql}
       GROUP BY 1
    )
    SELECT b.local AT TIME ZONE ? AS bucket_start,
           (coalesce(c.n, 0) + coalesce(x.created, 0))::int AS created, (coalesce(r.n, 0) + coalesce(x.resolved, 0))::int AS resolved
      FROM buckets b LEFT JOIN created c ON c.local = b.local LEFT JOIN resolved r ON r.local = b.local
      LEFT JOIN rolled x ON x.local = b.local
     ORDER BY b.local`,
  [f.from, tz, f.to, tz,
    tz, ...covered.bindings, ...rf.bindings,
    tz, ...r, ctx.tenantId, ...filter.bindings,
    tz, ...r, ctx.tenantId, ...filter.bindings,
    tz]);
  return {
    from: iso(f.from)!, to: iso(f.to)!, interval, tz,
    series: (result.rows as Array<{ bucket_start: Date; created: number; resolved: number }>).map((r) => ({
      bucket_start: iso(r.bucket_start)!, created: Number(r.created), resolved: Number(r.resolved),
    })),
  };
}

/** Tickets created per local weekday (0 = Monday) and hour of `tz`: all 168 cells, zeros included. */
export function heatmap(ctx: Ctx, f: Filters) {
  return inReportSnapshot(ctx, (ctx) => heatmapIn(ctx, f));
}

async function heatmapIn(ctx: Ctx, f: Filters) {
  const filter = ticketFilter(f);
  const cov = await coverage(ctx, f.from, f.to, wholeHourZone(f.tz, f.from, f.to));
  const covered = coveredSql(ctx, cov);
  const rf = rollupFilter(f);
  const result = await ctx.trx.raw(`
    SELECT x.weekday, x.hour, sum(x.n)::int AS created FROM (
      SELECT extract(isodow FROM h.hour AT TIME ZONE ?)::int - 1 AS weekday,
             extract(hour FROM h.hour AT TIME ZONE ?)::int AS hour, sum(h.created) AS n
        FROM report_rollup_hours h
       WHERE ${covered.sql}${rf.sql}
       GROUP BY 1, 2
      UNION ALL
      SELECT extract(isodow FROM t.created_at AT TIME ZONE ?)::int - 1,
             extract(hour FROM t.created_at AT TIME ZONE ?)::int, count(*)
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN tickets t ON t.tenant_id = ? AND t.created_at >= r.a AND t.created_at < r.b${filter.sql}
       GROUP BY 1, 2
    ) x
    GROUP BY 1, 2`,
  [f.tz, f.tz, ...covered.bindings, ...rf.bindings, f.tz, f.tz, cov.live.starts, cov.live.ends, ctx.tenantId, ...filter.bindings]);
  const counts = new Map<string, number>();
  for (const r of result.rows as Array<{ weekday: number; hour: number; created: number }>) counts.set(`${r.weekday}:${r.hour}`, Number(r.created));
  const cells = [];
  for (let weekday = 0; weekday < 7; weekday++) {
    for (let hour = 0; hour < 24; hour++) cells.push({ weekday, hour, created: counts.get(`${weekday}:${hour}`) ?? 0 });
  }
  return { from: iso(f.from)!, to: iso(f.to)!, tz: f.tz, cells };
}
