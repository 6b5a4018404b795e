import type { Ctx } from '../core/context.js';
import { hasTicketFilter, iso, num, ticketFilter, type Filters } from './filters.js';

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

const SLA_TARGETS = ['first_response', 'next_response', 'resolution'] as const;
export type SlaTarget = (typeof SLA_TARGETS)[number];

/** When a target was decided: its breach, else its met (the expression the outcome indexes hold). */
const outcomeAt = (target: SlaTarget, alias = 't') =>
  `coalesce(${alias}.sla->'${target}'->>'breached_at', ${alias}.sla->'${target}'->>'met_at')`;

type Row = Record<string, unknown>;

async function one(ctx: Ctx, sql: string, bindings: unknown[]): Promise<Row> {
  const result = await ctx.trx.raw(sql, bindings as any[]);
  return (result.rows[0] ?? {}) as Row;
}

/**
 * Tickets created in the window: how many, and their average first-response and resolution times;
 * with `rates`, also what the BI rates count (one pass over the same index range).
 */
function createdStats(ctx: Ctx, f: Filters, rates = false): Promise<Row> {
  const filter = ticketFilter(f);
  const rateColumns = rates ? `,
           count(*) FILTER (WHERE t.reopened_count > 0)::int AS reopened,
           count(*) FILTER (WHERE t.resolved_at IS NOT NULL OR t.reopened_count > 0)::int AS ever_resolved,
           count(t.resolved_at)::int AS resolved,
           count(*) FILTER (WHERE t.resolved_at IS NOT NULL AND t.reopened_count = 0 AND r.n = 1)::int AS one_touch` : '';
  // Public staff replies per ticket: a ticket's messages are never older than the ticket, so those
  // of tickets created since `from` are among the replies written since `from` (one index range).
  const replies = rates ? `
      LEFT JOIN (SELECT m.ticket_id, count(*) AS n FROM messages m
                  WHERE m.tenant_id = ? AND m.is_agent AND NOT m.is_private AND m.created_at >= ?
                  GROUP BY m.ticket_id) r ON r.ticket_id = t.id` : '';
  return one(ctx, `
    SELECT count(*)::int AS created,
           avg(extract(epoch FROM t.first_responded_at - t.created_at))::float8 AS avg_first_response,
           avg(extract(epoch FROM t.resolved_at - t.created_at))::float8 AS avg_resolution${rateColumns}
      FROM tickets t${replies}
     WHERE t.tenant_id = ? AND t.created_at >= ? AND t.created_at < ?${filter.sql}`,
  [...(rates ? [ctx.tenantId, f.from] : []), ctx.tenantId, f.from, f.to, ...filter.bindings]);
}

/** Tickets whose (current) resolution falls in the window. */
function resolvedCount(ctx: Ctx, f: Filters): Promise<Row> {
  const filter = ticketFilter(f);
  return one(ctx, `
    SELECT count(*)::int AS resolved
      FROM tickets t
     WHERE t.tenant_id = ? AND t.resolved_at >= ? AND t.resolved_at < ?${filter.sql}`,
  [ctx.tenantId, f.from, f.to, ...filter.bindings]);
}

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

/** SLA targets met on time and all targets decided (met or breached) in the window. */
function slaStats(ctx: Ctx, f: Filters): Promise<Row> {
  const outcomes = slaOutcomesSql(ctx, f);
  return one(ctx, `SELECT count(*) FILTER (WHERE o.on_time)::int AS on_time, count(*)::int AS decided FROM (${outcomes.sql}) o`, outcomes.bindings);
}

/** The CSAT join to tickets, only when a ticket filter needs it. */
export function csatTicketJoin(f: Filters): { sql: string; bindings: any[] } {
  if (!hasTicketFilter(f)) return { sql: '', bindings: [] };
  const filter = ticketFilter(f);
  return { sql: ` JOIN tickets t ON t.tenant_id = s.tenant_id AND t.id = s.ticket_id${filter.sql}`, bindings: filter.bindings };
}

/** Ratings submitted in the window (average) and surveys sent in the window (how many were rated). */
async function csatStats(ctx: Ctx, f: Filters): Promise<Row> {
  const join = csatTicketJoin(f);
  const [rated, sent] = await Promise.all([
    one(ctx, `SELECT count(*)::int AS ratings, avg(s.score)::float8 AS average FROM csat_surveys s${join.sql}
                WHERE s.tenant_id = ? AND s.submitted_at >= ? AND s.submitted_at < ?`, [...join.bindings, ctx.tenantId, f.from, f.to]),
    one(ctx, `SELECT count(*)::int AS sent, count(s.submitted_at)::int AS answered FROM csat_surveys s${join.sql}
                WHERE s.tenant_id = ? AND s.created_at >= ? AND s.created_at < ?`, [...join.bindings, ctx.tenantId, f.from, f.to]),
  ]);
  return { ...rated, ...sent };
}

const ratio = (part: unknown, whole: unknown) => (Number(whole) > 0 ? Number(part) / Number(whole) : null);

export interface Rates {
  reopen_rate: number | null;
  one_touch_resolution_rate: number | null;
}

export async function overviewMetrics(ctx: Ctx, f: Filters): Promise<OverviewMetrics>;
export async function overviewMetrics(ctx: Ctx, f: Filters, rates: true): Promise<OverviewMetrics & Rates>;
export async function overviewMetrics(ctx: Ctx, f: Filters, rates = false): Promise<OverviewMetrics & Partial<Rates>> {
  const [created, resolved, sla, csat] = await Promise.all([createdStats(ctx, f, rates), resolvedCount(ctx, f), slaStats(ctx, f), csatStats(ctx, f)]);
  return {
    ...(rates ? {
      // BI: reopened ÷ ever resolved, and resolved after exactly one public staff reply and never reopened ÷ resolved.
      reopen_rate: ratio(created.reopened, created.ever_resolved),
      one_touch_resolution_rate: ratio(created.one_touch, created.resolved),
    } : {}),
    total_tickets_created: Number(created.created),
    total_tickets_resolved: Number(resolved.resolved),
    avg_first_response_time_seconds: num(created.avg_first_response),
    avg_resolution_time_seconds: num(created.avg_resolution),
    sla_compliance_rate: ratio(sla.on_time, sla.decided),
    csat_average_score: num(csat.average),
    csat_response_rate: ratio(csat.answered, csat.sent),
  };
}

export async function overview(ctx: Ctx, f: Filters): Promise<OverviewMetrics & { from: string; to: string }> {
  return { ...(await overviewMetrics(ctx, f)), from: iso(f.from)!, to: iso(f.to)! };
}
