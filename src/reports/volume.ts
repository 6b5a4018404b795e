import type { Ctx } from '../core/context.js';
import { iso, ticketFilter, type Filters } from './filters.js';

export type Interval = 'day' | 'week' | 'month';
export const INTERVALS: readonly Interval[] = ['day', 'week', 'month'];

/**
 * Tickets created and resolved per local day, week or month of `tz`. Every bucket that meets the
 * window is listed, empty ones with zeros; the first may start before `from`, but only the window
 * is counted. Local buckets follow the zone's clock: a DST day is 23 or 25 hours long.
 */
export async function volume(ctx: Ctx, f: Filters, interval: Interval) {
  const filter = ticketFilter(f);
  const tz = f.tz;
  const result = await ctx.trx.raw(`
    WITH buckets AS (
      SELECT generate_series(date_trunc('${interval}', ?::timestamptz AT TIME ZONE ?),
                             (?::timestamptz - interval '1 microsecond') AT TIME ZONE ?,
                             interval '1 ${interval}') AS local
    ), created AS (
      SELECT date_trunc('${interval}', t.created_at AT TIME ZONE ?) AS local, count(*)::int AS n
        FROM tickets t
       WHERE t.tenant_id = ? AND t.created_at >= ? AND t.created_at < ?${filter.sql}
       GROUP BY 1
    ), resolved AS (
      SELECT date_trunc('${interval}', t.resolved_at AT TIME ZONE ?) AS local, count(*)::int AS n
        FROM tickets t
       WHERE t.tenant_id = ? AND t.resolved_at >= ? AND t.resolved_at < ?${filter.sql}
       GROUP BY 1
    )
    SELECT b.local AT TIME ZONE ? AS bucket_start, coalesce(c.n, 0) AS created, coalesce(r.n, 0) AS resolved
      FROM buckets b LEFT JOIN created c ON c.local = b.local LEFT JOIN resolved r ON r.local = b.local
     ORDER BY b.local`,
  [f.from, tz, f.to, tz,
    tz, ctx.tenantId, f.from, f.to, ...filter.bindings,
    tz, ctx.tenantId, f.from, f.to, ...filter.bindings,
    tz]);
  return {
    from: iso(f.from)!, to: iso(f.to)!, interval, tz,
    series: (result.rows as Array<{ bucket_start: Date; created: number; resolved: number }>).map((r) => ({
      bucket_start: iso(r.bucket_start)!, created: Number(r.created), resolved: Number(r.resolved),
    })),
  };
}

/** Tickets created per local weekday (0 = Monday) and hour of `tz`: all 168 cells, zeros included. */
export async function heatmap(ctx: Ctx, f: Filters) {
  const filter = ticketFilter(f);
  const result = await ctx.trx.raw(`
    SELECT extract(isodow FROM t.created_at AT TIME ZONE ?)::int - 1 AS weekday,
           extract(hour FROM t.created_at AT TIME ZONE ?)::int AS hour, count(*)::int AS created
      FROM tickets t
     WHERE t.tenant_id = ? AND t.created_at >= ? AND t.created_at < ?${filter.sql}
     GROUP BY 1, 2`,
  [f.tz, f.tz, ctx.tenantId, f.from, f.to, ...filter.bindings]);
  const counts = new Map<string, number>();
  for (const r of result.rows as Array<{ weekday: number; hour: number; created: number }>) counts.set(`${r.weekday}:${r.hour}`, Number(r.created));
  const cells = [];
  for (let weekday = 0; weekday < 7; weekday++) {
    for (let hour = 0; hour < 24; hour++) cells.push({ weekday, hour, created: counts.get(`${weekday}:${hour}`) ?? 0 });
  }
  return { from: iso(f.from)!, to: iso(f.to)!, tz: f.tz, cells };
}
