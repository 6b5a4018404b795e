import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { hasTicketFilter, num, ticketFilter, type Filters } from './filters.js';
import { coverage, coveredSql, inReportSnapshot, rollupFilter, textRanges, type Coverage } from './rollup.js';

export interface AgentRow {
  agent_id: string;
  agent_name: string;
  assigned: number;
  resolved: number;
  public_replies: number;
  avg_first_response_time_seconds: number | null;
  avg_resolution_time_seconds: number | null;
  csat_average_score: number | null;
}

/**
 * One row per staff user (admin or agent): active ones always, deactivated ones while they have
 * figures in the window. Tickets count for their current assignee:
 * - assigned: tickets created in the window assigned to the agent; their average first-response
 *   and resolution times as in the overview;
 * - resolved: tickets resolved in the window assigned to the agent;
 * - public_replies: public replies the agent wrote in the window;
 * - csat_average_score: ratings submitted in the window on tickets assigned to the agent.
 */
async function agentRows(ctx: Ctx, f: Filters, onlyUserId?: string): Promise<AgentRow[]> {
  return inReportSnapshot(ctx, async (ctx) => agentRowsIn(ctx, f, await coverage(ctx, f.from, f.to), onlyUserId));
}

/**
 * The agents report over the covered rollup hours (`report_rollup_agent_hours`) plus the same
 * parts computed live over the rest of the window, summed per agent in one statement; averages
 * recombined as total sum ÷ total count in numeric, as `avg()` computes them.
 */
async function agentRowsIn(ctx: Ctx, f: Filters, cov: Coverage, onlyUserId?: string): Promise<AgentRow[]> {
  const filter = ticketFilter(f);
  const rf = rollupFilter(f);
  const covered = coveredSql(ctx, cov);
  const r = [cov.live.starts, cov.live.ends];
  const messageJoin = hasTicketFilter(f) ? ` JOIN tickets t ON t.tenant_id = m.tenant_id AND t.id = m.ticket_id${filter.sql}` : '';
  // The caller's own row is answered even while it has nothing in the window.
  const only = onlyUserId ? ' AND u.id = ?' : ' AND (u.active OR c.id IS NOT NULL OR r.id IS NOT NULL OR p.id IS NOT NULL OR s.id IS NOT NULL)';
  const result = await ctx.trx.raw(`
    WITH roll AS (
      SELECT h.agent_id AS id, sum(h.created) AS created, sum(h.frt_sum) AS frt_sum, sum(h.frt_n) AS frt_n,
             sum(h.res_sum) AS res_sum, sum(h.res_n) AS res_n, sum(h.resolved) AS resolved, sum(h.replies) AS replies,
             sum(h.csat_ratings) AS ratings, sum(h.csat_score_sum) AS score_sum
        FROM report_rollup_agent_hours h
       WHERE ${covered.sql}${rf.sql}
       GROUP BY 1
    ), created AS (
      SELECT id, sum(n) AS n, sum(frt_sum) / nullif(sum(frt_n), 0) AS avg_first_response, sum(res_sum) / nullif(sum(res_n), 0) AS avg_resolution
        FROM (
          SELECT id, created AS n, frt_sum, frt_n, res_sum, res_n FROM roll WHERE created > 0
          UNION ALL
          SELECT t.assigned_agent_id, count(*), coalesce(sum(extract(epoch FROM t.first_responded_at - t.created_at)), 0), count(t.first_responded_at),
                 coalesce(sum(extract(epoch FROM t.resolved_at - t.created_at)), 0), count(t.resolved_at)
            FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
            JOIN tickets t ON t.tenant_id = ? AND t.created_at >= r.a AND t.created_at < r.b
           WHERE t.assigned_agent_id IS NOT NULL${filter.sql}
           GROUP BY 1
        ) x
       GROUP BY id
    ), resolved AS (
      SELECT id, sum(n) AS n FROM (
          SELECT id, resolved AS n FROM roll WHERE resolved > 0
          UNION ALL
          SELECT t.assigned_agent_id, count(*)
            FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
            JOIN tickets t ON t.tenant_id = ? AND t.resolved_at >= r.a AND t.resolved_at < r.b
           WHERE t.assigned_agent_id IS NOT NULL${filter.sql}
           GROUP BY 1
        ) x
       GROUP BY id
    ), replies AS (
      SELECT id, sum(n) AS n FROM (
          SELECT id, replies AS n FROM roll WHERE replies > 0
          UNION ALL
          SELECT m.author_id, count(*)
            FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
            JOIN messages m ON m.tenant_id = ? AND m.is_agent AND NOT m.is_private AND m.created_at >= r.a AND m.created_at < r.b${messageJoin}
           WHERE m.author_id IS NOT NULL
           GROUP BY 1
        ) x
       GROUP BY id
    ), csat AS (
      SELECT id, sum(score_sum)::numeric / sum(ratings) AS average FROM (
          SELECT id, ratings, score_sum FROM roll WHERE ratings > 0
          UNION ALL
          SELECT t.assigned_agent_id, count(*), sum(s.score)
            FROM csat_surveys s
            JOIN tickets t ON t.tenant_id = s.tenant_id AND t.id = s.ticket_id
           WHERE s.tenant_id = ? AND (${textRanges('s.submitted_at', cov.live.starts.length)}) AND t.assigned_agent_id IS NOT NULL${filter.sql}
           GROUP BY 1
        ) x
       GROUP BY id
    )
    SELECT u.id, u.name, c.n AS assigned, c.avg_first_response::float8 AS avg_first_response, c.avg_resolution::float8 AS avg_resolution,
           r.n AS resolved, p.n AS replies, s.average::float8 AS average
      FROM users u
      LEFT JOIN created c ON c.id = u.id
      LEFT JOIN resolved r ON r.id = u.id
      LEFT JOIN replies p ON p.id = u.id
      LEFT JOIN csat s ON s.id = u.id
     WHERE u.tenant_id = ? AND u.role IN ('admin', 'agent')${only}
     ORDER BY u.name, u.id`,
  [...covered.bindings, ...rf.bindings,
    ...r, ctx.tenantId, ...filter.bindings,
    ...r, ctx.tenantId, ...filter.bindings,
    ...r, ctx.tenantId, ...(messageJoin ? filter.bindings : []),
    ctx.tenantId, ...cov.live.starts.flatMap((a, i) => [a, cov.live.ends[i]!]), ...filter.bindings,
    ctx.tenantId, ...(onlyUserId ? [onlyUserId] : [])]);
  return (result.rows as Array<Record<string, unknown>>).map((r) => ({
    agent_id: String(r.id),
    agent_name: String(r.name),
    assigned: Number(r.assigned ?? 0),
    resolved: Number(r.resolved ?? 0),
    public_replies: Number(r.replies ?? 0),
    avg_first_response_time_seconds: num(r.avg_first_response),
    avg_resolution_time_seconds: num(r.avg_resolution),
    csat_average_score: num(r.average),
  }));
}

export async function agentsReport(ctx: Ctx, f: Filters): Promise<{ data: AgentRow[] }> {
  return { data: await agentRows(ctx, f) };
}

/** The caller's own row (free in every edition): staff only; an API key speaks for its owner. */
export async function myReport(ctx: Ctx, f: Filters): Promise<AgentRow> {
  const userId = ctx.actor.userId;
  if (!userId) throw errors.forbidden('Only a staff user has a report of their own');
  const [row] = await agentRows(ctx, f, userId);
  if (!row) throw errors.forbidden('Only a staff user has a report of their own');
  return row;
}
