import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { hasTicketFilter, num, ticketFilter, type Filters } from './filters.js';

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
  const filter = ticketFilter(f);
  const messageJoin = hasTicketFilter(f) ? ` JOIN tickets t ON t.tenant_id = m.tenant_id AND t.id = m.ticket_id${filter.sql}` : '';
  // The caller's own row is answered even while it has nothing in the window.
  const only = onlyUserId ? ' AND u.id = ?' : ' AND (u.active OR c.id IS NOT NULL OR r.id IS NOT NULL OR p.id IS NOT NULL OR s.id IS NOT NULL)';
  const result = await ctx.trx.raw(`
    WITH created AS (
      SELECT t.assigned_agent_id AS id, count(*)::int AS n,
             avg(extract(epoch FROM t.first_responded_at - t.created_at))::float8 AS avg_first_response,
             avg(extract(epoch FROM t.resolved_at - t.created_at))::float8 AS avg_resolution
        FROM tickets t
       WHERE t.tenant_id = ? AND t.created_at >= ? AND t.created_at < ? AND t.assigned_agent_id IS NOT NULL${filter.sql}
       GROUP BY 1
    ), resolved AS (
      SELECT t.assigned_agent_id AS id, count(*)::int AS n
        FROM tickets t
       WHERE t.tenant_id = ? AND t.resolved_at >= ? AND t.resolved_at < ? AND t.assigned_agent_id IS NOT NULL${filter.sql}
       GROUP BY 1
    ), replies AS (
      SELECT m.author_id AS id, count(*)::int AS n
        FROM messages m${messageJoin}
       WHERE m.tenant_id = ? AND m.is_agent AND NOT m.is_private AND m.created_at >= ? AND m.created_at < ? AND m.author_id IS NOT NULL
       GROUP BY 1
    ), csat AS (
      SELECT t.assigned_agent_id AS id, avg(s.score)::float8 AS average
        FROM csat_surveys s
        JOIN tickets t ON t.tenant_id = s.tenant_id AND t.id = s.ticket_id
       WHERE s.tenant_id = ? AND s.submitted_at >= ? AND s.submitted_at < ? AND t.assigned_agent_id IS NOT NULL${filter.sql}
       GROUP BY 1
    )
    SELECT u.id, u.name, c.n AS assigned, c.avg_first_response, c.avg_resolution, r.n AS resolved, p.n AS replies, s.average
      FROM users u
      LEFT JOIN created c ON c.id = u.id
      LEFT JOIN resolved r ON r.id = u.id
      LEFT JOIN replies p ON p.id = u.id
      LEFT JOIN csat s ON s.id = u.id
     WHERE u.tenant_id = ? AND u.role IN ('admin', 'agent')${only}
     ORDER BY u.name, u.id`,
  [ctx.tenantId, f.from, f.to, ...filter.bindings,
    ctx.tenantId, f.from, f.to, ...filter.bindings,
    ...(messageJoin ? filter.bindings : []), ctx.tenantId, f.from, f.to,
    ctx.tenantId, f.from, f.to, ...filter.bindings,
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
