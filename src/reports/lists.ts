import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { isUuid } from '../core/ids.js';
import { DEFAULT_PAGE_SIZE, paginateUnbounded, type CursorInput } from '../core/pagination.js';
import { scoped } from '../db/tenant-scope.js';
import { csatTicketJoin, type SlaTarget } from './overview.js';
import { hasTicketFilter, iso, ticketFilter, type Filters } from './filters.js';
import { BREACH_TYPES, coverage, coveredSql, inReportSnapshot, rangeBindings, rollupFilter, textRanges } from './rollup.js';

const BREACH_TARGETS: Record<string, SlaTarget> = {
  'ticket.first_response_breached': 'first_response',
  'ticket.next_response_breached': 'next_response',
  'ticket.sla_breached': 'resolution',
};

/**
 * Every SLA breach whose instant (`breached_at`, the target's due time) falls in the window, newest
 * first: one row per breach event, so each next-response cycle that breached is listed. A target
 * met after its breach is still listed. The list walks the partial index `events_sla_breaches`
 * backwards on `(data->>'at', id)` (RFC 3339 text, which sorts as time), so a page costs its own
 * rows whatever the window holds; the cursor is that key. Tickets are read for the page's rows only
 * (with a team or channel filter, the walk checks each breach's ticket as it goes).
 */
export async function slaBreaches(ctx: Ctx, f: Filters, page: CursorInput) {
  if (page.cursor !== undefined && page.page !== undefined) throw errors.validation([{ field: 'cursor', message: 'cannot be combined with page' }]);
  return inReportSnapshot(ctx, (ctx) => slaBreachesIn(ctx, f, page));
}

/**
 * The total: breach rollups (`report_rollup_breach_hours`) for the covered whole hours plus the
 * live count over the rest of the window, in one statement.
 */
async function breachTotal(ctx: Ctx, f: Filters, join: string, filterBindings: unknown[]): Promise<number> {
  const cov = await coverage(ctx, f.from, f.to);
  const covered = coveredSql(ctx, cov);
  const rf = rollupFilter(f);
  const result = await ctx.trx.raw(`
    SELECT ((SELECT coalesce(sum(h.breaches), 0) FROM report_rollup_breach_hours h WHERE ${covered.sql}${rf.sql})
          + (SELECT count(*) FROM events e${join}
              WHERE e.tenant_id = ? AND e.type IN (${BREACH_TYPES.map(() => '?').join(', ')})
                AND (${textRanges("e.data->>'at'", cov.live.starts.length)})))::int AS n`,
  [...covered.bindings, ...rf.bindings, ...filterBindings, ctx.tenantId, ...BREACH_TYPES, ...rangeBindings(cov.live)] as any[]);
  return Number(result.rows[0].n);
}

async function slaBreachesIn(ctx: Ctx, f: Filters, page: CursorInput) {
  const filter = ticketFilter(f);
  const types = Object.keys(BREACH_TARGETS);
  const pageSize = page.page_size ?? DEFAULT_PAGE_SIZE;
  const join = hasTicketFilter(f) ? ` JOIN tickets t ON t.tenant_id = e.tenant_id AND t.id = e.ticket_id${filter.sql}` : '';
  const where = `e.tenant_id = ? AND e.type IN (${types.map(() => '?').join(', ')}) AND e.data->>'at' >= ? AND e.data->>'at' < ?`;
  const bindings = [...(join ? filter.bindings : []), ctx.tenantId, ...types, f.from.toISOString(), f.to.toISOString()];
  let after = '';
  const afterBindings: unknown[] = [];
  if (page.cursor) {
    const key = decodeBreachCursor(page.cursor);
    after = ` AND (e.data->>'at', e.id) < (?, ?::uuid)`;
    afterBindings.push(key.at, key.id);
  }
  const offset = page.cursor === undefined ? ((page.page ?? 1) - 1) * pageSize : 0;
  const [rows, total] = await Promise.all([
    ctx.trx.raw(`SELECT e.id, e.data->>'at' AS at, e.type, e.ticket_id, e.from_value AS due_at FROM events e${join}
                  WHERE ${where}${after} ORDER BY e.data->>'at' DESC, e.id DESC LIMIT ? OFFSET ?`,
    [...bindings, ...afterBindings, pageSize + 1, offset] as any[]),
    page.cursor === undefined ? breachTotal(ctx, f, join, join ? filter.bindings : []) : Promise.resolve(null),
  ]);
  const found = rows.rows as Array<{ id: string; at: string; type: string; ticket_id: string; due_at: string | null }>;
  const more = found.length > pageSize;
  const pageRows = found.slice(0, pageSize);
  const ids = [...new Set(pageRows.map((r) => r.ticket_id))];
  const tickets = new Map<string, { ticket_number: number; priority_id: string; team_id: string | null }>();
  if (ids.length) {
    const found = await scoped(ctx, 'tickets').whereIn('id', ids).select('id', 'ticket_number', 'priority_id', 'team_id');
    for (const t of found) tickets.set(t.id, t);
  }
  const last = pageRows[pageRows.length - 1];
  const next = more && last ? Buffer.from(JSON.stringify({ a: last.at, i: last.id }), 'utf8').toString('base64url') : null;
  return {
    data: pageRows.map((r) => {
      const t = tickets.get(r.ticket_id)!;
      return {
        ticket_id: r.ticket_id, ticket_number: t.ticket_number, target: BREACH_TARGETS[r.type]!,
        due_at: iso(r.due_at), breached_at: iso(r.at)!, priority_id: t.priority_id, team_id: t.team_id,
      };
    }),
    meta: page.cursor === undefined
      ? { page: page.page ?? 1, page_size: pageSize, total: total!, next_cursor: next }
      : { page_size: pageSize, next_cursor: next },
  };
}

function decodeBreachCursor(cursor: string): { at: string; id: string } {
  const invalid = () => errors.validation([{ field: 'cursor', message: 'is invalid' }]);
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let key: { a?: unknown; i?: unknown } | null;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!key || typeof key.a !== 'string' || !/^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(key.a) || !isUuid(key.i)) throw invalid();
  return { at: key.a, id: key.i };
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
  // The summary first: its count is the list's total (every survey has its ticket: FK), so the
  // page needs no count of its own over the join (at a year of ratings, most of the answer's time).
  const summary = await ctx.trx.raw(`SELECT s.score, count(*)::int AS n FROM csat_surveys s${join.sql} WHERE ${where} GROUP BY 1`, bindings as any[]);
  const distribution: Record<string, number> = { 1: 0, 2: 0, 3: 0, 4: 0, 5: 0 };
  let count = 0;
  let total = 0;
  for (const r of summary.rows as Array<{ score: number; n: number }>) {
    distribution[String(r.score)] = r.n;
    count += r.n;
    total += r.n * r.score;
  }
  const list = await paginateUnbounded<Record<string, any>>(page, rows, { table: 'r' }, (r) => ({
    id: r.id, ticket_id: r.ticket_id, ticket_number: r.ticket_number, score: Number(r.score), comment: r.comment ?? null,
    reason: r.reason ?? null, agent_id: r.assigned_agent_id ?? null, submitted_at: iso(r.created_at)!,
  }), count);
  return { ...list, summary: { count, average: count ? total / count : null, distribution } };
}
