import type { Ctx } from '../core/context.js';
import { hasTicketFilter, iso, num, ticketFilter, type Filters } from './filters.js';
import { coverage, coveredSql, inReportSnapshot, rangeBindings, rollupFilter, textRanges, type Coverage } from './rollup.js';

/**
 * The overview metrics (SPEC "Report metrics (overview)", CONTRACT §18). Every figure is one
 * aggregate over an index range of the tenant and window; docs/reports.md gives the same SQL as
 * the definition. The window is half-open: `from <= x < to`.
 */
export interface OverviewMetrics {
  total_tickets_created: number;
  total_tickets_resolved: number;
  avg_first_response_time_seconds: number | null;
  avg_resolution_time_seconds: number | null;
  sla_compliance_rate: number | null;
  csat_average_score: number | null;
  csat_response_rate: number | null;
}

export const SLA_TARGETS = ['first_response', 'next_response', 'resolution'] as const;
export type SlaTarget = (typeof SLA_TARGETS)[number];

/** When a target was decided: its breach, else its met (the expression the outcome indexes hold). */
export const outcomeAt = (target: SlaTarget, alias = 't') =>
  `coalesce(${alias}.sla->'${target}'->>'breached_at', ${alias}.sla->'${target}'->>'met_at')`;

type Row = Record<string, unknown>;


/** The SQL of the targets decided in the window, one row per (ticket, target), for reuse. */
export function slaOutcomesSql(ctx: Ctx, f: Filters, columns = ''): { sql: string; bindings: any[] } {
  const filter = ticketFilter(f);
  const parts: string[] = [];
  const bindings: any[] = [];
  for (const target of SLA_TARGETS) {
    parts.push(`
      SELECT '${target}'::text AS target, (t.sla->'${target}'->>'breached_at') IS NULL AS on_time,
             ${outcomeAt(target)}::timestamptz AS decided_at${columns}
        FROM tickets t
       WHERE t.tenant_id = ? AND ${outcomeAt(target)} >= ? AND ${outcomeAt(target)} < ?${filter.sql}`);
    bindings.push(ctx.tenantId, f.from.toISOString(), f.to.toISOString(), ...filter.bindings);
  }
  return { sql: parts.join('\n      UNION ALL'), bindings };
}

/** The CSAT join to tickets, only when a ticket filter needs it. */
export function csatTicketJoin(f: Filters): { sql: string; bindings: any[] } {
  if (!hasTicketFilter(f)) return { sql: '', bindings: [] };
  const filter = ticketFilter(f);
  return { sql: ` JOIN tickets t ON t.tenant_id = s.tenant_id AND t.id = s.ticket_id${filter.sql}`, bindings: filter.bindings };
}

const ratio = (part: unknown, whole: unknown) => (Number(whole) > 0 ? Number(part) / Number(whole) : null);

export interface Rates {
  reopen_rate: number | null;
  one_touch_resolution_rate: number | null;
}

export async function overviewMetrics(ctx: Ctx, f: Filters): Promise<OverviewMetrics>;
export async function overviewMetrics(ctx: Ctx, f: Filters, rates: true): Promise<OverviewMetrics & Rates>;
export async function overviewMetrics(ctx: Ctx, f: Filters, rates = false): Promise<OverviewMetrics & Partial<Rates>> {
  const row = await inReportSnapshot(ctx, async (ctx) => periodStats(ctx, f, await coverage(ctx, f.from, f.to), rates));
  return {
    ...(rates ? {
      // BI: reopened ÷ ever resolved, and resolved after exactly one public staff reply and never reopened ÷ resolved.
      reopen_rate: ratio(row.reopened, row.ever_resolved),
      one_touch_resolution_rate: ratio(row.one_touch, row.res_n),
    } : {}),
    total_tickets_created: Number(row.created),
    total_tickets_resolved: Number(row.resolved),
    avg_first_response_time_seconds: num(row.avg_first_response),
    avg_resolution_time_seconds: num(row.avg_resolution),
    sla_compliance_rate: ratio(row.sla_on_time, row.sla_decided),
    csat_average_score: num(row.csat_average),
    csat_response_rate: ratio(row.csat_answered, row.csat_sent),
  };
}

/**
 * Every overview figure of one window in one statement (one snapshot): the covered rollup hours
 * summed, plus the same sums computed live over the rest of the window (`cov.live`), combined
 * exactly as the live definition would (averages as total sum ÷ total count, in numeric).
 */
async function periodStats(ctx: Ctx, f: Filters, cov: Coverage, rates: boolean): Promise<Row> {
  const filter = ticketFilter(f);
  const rf = rollupFilter(f);
  const covered = coveredSql(ctx, cov);
  const join = csatTicketJoin(f);
  const r = [cov.live.starts, cov.live.ends];
  const liveBindings = cov.live.starts.flatMap((a, i) => [a, cov.live.ends[i]!]);
  const rateColumns = rates ? `,
             count(*) FILTER (WHERE t.reopened_count > 0) AS reopened,
             count(*) FILTER (WHERE t.resolved_at IS NOT NULL OR t.reopened_count > 0) AS ever_resolved,
             count(*) FILTER (WHERE t.resolved_at IS NOT NULL AND t.reopened_count = 0
               AND (SELECT count(*) FROM messages m WHERE m.tenant_id = t.tenant_id AND m.ticket_id = t.id AND m.is_agent AND NOT m.is_private) = 1) AS one_touch` : `,
             0 AS reopened, 0 AS ever_resolved, 0 AS one_touch`;
  // The SLA outcome instants are text (indexed by expression, partial): explicit ranges let the
  // planner use those indexes (a join to unnest() would not prove the partial index's predicate).
  const sla = SLA_TARGETS.map((target) => `
        SELECT (t.sla->'${target}'->>'breached_at') IS NULL AS on_time
          FROM tickets t
         WHERE t.tenant_id = ? AND (${textRanges(outcomeAt(target), cov.live.starts.length)})${filter.sql}`).join('\n        UNION ALL');
  const slaBindings = SLA_TARGETS.flatMap(() => [ctx.tenantId, ...rangeBindings(cov.live), ...filter.bindings]);
  const result = await ctx.trx.raw(`
    WITH roll AS (
      SELECT coalesce(sum(h.created), 0) AS created, coalesce(sum(h.frt_sum), 0) AS frt_sum, coalesce(sum(h.frt_n), 0) AS frt_n,
             coalesce(sum(h.res_sum), 0) AS res_sum, coalesce(sum(h.res_n), 0) AS res_n, coalesce(sum(h.reopened), 0) AS reopened,
             coalesce(sum(h.ever_resolved), 0) AS ever_resolved, coalesce(sum(h.one_touch), 0) AS one_touch,
             coalesce(sum(h.resolved), 0) AS resolved, coalesce(sum(h.sla_on_time), 0) AS sla_on_time,
             coalesce(sum(h.sla_decided), 0) AS sla_decided, coalesce(sum(h.csat_ratings), 0) AS csat_ratings,
             coalesce(sum(h.csat_score_sum), 0) AS csat_score_sum, coalesce(sum(h.csat_sent), 0) AS csat_sent,
             coalesce(sum(h.csat_answered), 0) AS csat_answered
        FROM report_rollup_hours h
       WHERE ${covered.sql}${rf.sql}
    ), created AS (
      SELECT count(*) AS created,
             coalesce(sum(extract(epoch FROM t.first_responded_at - t.created_at)), 0) AS frt_sum, count(t.first_responded_at) AS frt_n,
             coalesce(sum(extract(epoch FROM t.resolved_at - t.created_at)), 0) AS res_sum, count(t.resolved_at) AS res_n${rateColumns}
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN tickets t ON t.tenant_id = ? AND t.created_at >= r.a AND t.created_at < r.b${filter.sql}
    ), resolved AS (
      SELECT count(*) AS resolved
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN tickets t ON t.tenant_id = ? AND t.resolved_at >= r.a AND t.resolved_at < r.b${filter.sql}
    ), sla AS (
      SELECT count(*) FILTER (WHERE o.on_time) AS on_time, count(*) AS decided FROM (${sla}) o
    ), rated AS (
      SELECT count(*) AS ratings, coalesce(sum(s.score), 0) AS score_sum
        FROM csat_surveys s${join.sql}
       WHERE s.tenant_id = ? AND (${textRanges('s.submitted_at', cov.live.starts.length)})
    ), sent AS (
      SELECT count(*) AS sent, count(s.submitted_at) AS answered
        FROM csat_surveys s${join.sql}
       WHERE s.tenant_id = ? AND (${textRanges('s.created_at', cov.live.starts.length)})
    )
    SELECT (roll.created + c.created)::int AS created,
           ((roll.frt_sum + c.frt_sum) / nullif(roll.frt_n + c.frt_n, 0))::float8 AS avg_first_response,
           ((roll.res_sum + c.res_sum) / nullif(roll.res_n + c.res_n, 0))::float8 AS avg_resolution,
           (roll.res_n + c.res_n)::int AS res_n, (roll.reopened + c.reopened)::int AS reopened,
           (roll.ever_resolved + c.ever_resolved)::int AS ever_resolved, (roll.one_touch + c.one_touch)::int AS one_touch,
           (roll.resolved + rs.resolved)::int AS resolved,
           (roll.sla_on_time + sla.on_time)::int AS sla_on_time, (roll.sla_decided + sla.decided)::int AS sla_decided,
           ((roll.csat_score_sum + rt.score_sum)::numeric / nullif(roll.csat_ratings + rt.ratings, 0))::float8 AS csat_average,
           (roll.csat_sent + se.sent)::int AS csat_sent, (roll.csat_answered + se.answered)::int AS csat_answered
      FROM roll, created c, resolved rs, sla, rated rt, sent se`,
  [...covered.bindings, ...rf.bindings,
    ...r, ctx.tenantId, ...filter.bindings,
    ...r, ctx.tenantId, ...filter.bindings,
    ...slaBindings,
    ...join.bindings, ctx.tenantId, ...liveBindings,
    ...join.bindings, ctx.tenantId, ...liveBindings]);
  return result.rows[0] as Row;
}

export async function overview(ctx: Ctx, f: Filters): Promise<OverviewMetrics & { from: string; to: string }> {
  return { ...(await overviewMetrics(ctx, f)), from: iso(f.from)!, to: iso(f.to)! };
}
