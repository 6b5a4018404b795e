import type { Ctx } from '../core/context.js';
import { paginateUnbounded, type CursorInput } from '../core/pagination.js';
import { csatTicketJoin, type SlaTarget } from './overview.js';
import { iso, ticketFilter, type Filters } from './filters.js';

const BREACH_TARGETS: Record<string, SlaTarget> = {
  'ticket.first_response_breached': 'first_response',
  'ticket.next_response_breached': 'next_response',
  'ticket.sla_breached': 'resolution',
};

/**
 * Every SLA breach whose instant (`breached_at`, the target's due time) falls in the window, newest
 * first: one row per breach event, so each next-response cycle that breached is listed. A target
 * met after its breach is still listed.
 */
export async function slaBreaches(ctx: Ctx, f: Filters, page: CursorInput) {
  const filter = ticketFilter(f);
  const types = Object.keys(BREACH_TARGETS);
  const rows = ctx.trx.select('b.*').from(ctx.trx.raw(`(
    SELECT e.id, (e.data->>'at')::timestamptz AS created_at, e.type, e.ticket_id, e.from_value AS due_at,
           t.ticket_number, t.priority_id, t.team_id
      FROM events e JOIN tickets t ON t.tenant_id = e.tenant_id AND t.id = e.ticket_id
     WHERE e.tenant_id = ? AND e.type IN (${types.map(() => '?').join(', ')})
       AND e.data->>'at' >= ? AND e.data->>'at' < ?${filter.sql}
  ) AS b`, [ctx.tenantId, ...types, f.from.toISOString(), f.to.toISOString(), ...filter.bindings] as any[]));
  return paginateUnbounded<Record<string, any>>(page, rows, { table: 'b' }, (r) => ({
    ticket_id: r.ticket_id, ticket_number: r.ticket_number, target: BREACH_TARGETS[r.type]!,
    due_at: iso(r.due_at), breached_at: iso(r.created_at)!, priority_id: r.priority_id, team_id: r.team_id,
  }));
}

/** Ratings submitted in the window, newest first, with their summary over the whole window. */
export async function csatRatings(ctx: Ctx, f: Filters, page: CursorInput) {
  const join = csatTicketJoin(f);
  const where = `s.tenant_id = ? AND s.submitted_at >= ? AND s.submitted_at < ?`;
  const bindings = [...join.bindings, ctx.tenantId, f.from, f.to];
  const rows = ctx.trx.select('r.*').from(ctx.trx.raw(`(
    SELECT s.id, s.submitted_at AS created_at, s.ticket_id, s.score, s.comment, s.reason, tk.ticket_number, tk.assigned_agent_id
      FROM csat_surveys s${join.sql}
      JOIN tickets tk ON tk.tenant_id = s.tenant_id AND tk.id = s.ticket_id
     WHERE ${where}
  ) AS r`, bindings as any[]));
  const [list, summary] = await Promise.all([
    paginateUnbounded<Record<string, any>>(page, rows, { table: 'r' }, (r) => ({
      id: r.id, ticket_id: r.ticket_id, ticket_number: r.ticket_number, score: Number(r.score), comment: r.comment ?? null,
      reason: r.reason ?? null, agent_id: r.assigned_agent_id ?? null, submitted_at: iso(r.created_at)!,
    })),
    ctx.trx.raw(`SELECT s.score, count(*)::int AS n FROM csat_surveys s${join.sql} WHERE ${where} GROUP BY 1`, bindings as any[]),
  ]);
  const distribution: Record<string, number> = { 1: 0, 2: 0, 3: 0, 4: 0, 5: 0 };
  let count = 0;
  let total = 0;
  for (const r of summary.rows as Array<{ score: number; n: number }>) {
    distribution[String(r.score)] = r.n;
    count += r.n;
    total += r.n * r.score;
  }
  return { ...list, summary: { count, average: count ? total / count : null, distribution } };
}
