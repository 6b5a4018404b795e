import type { Ctx } from '../core/context.js';
import { hasTicketFilter, ticketFilter, type Filters } from './filters.js';
import { outcomeAt, SLA_TARGETS } from './overview.js';
import { coveredSql, rangeBindings, rollupFilter, textRanges, type Coverage } from './rollup.js';

/**
 * Catalog runs answered from the hourly rollups (docs/reports.md "Rollups"): for each rolled
 * (report, dimension), a source of rows — the covered rollup hours, then the live ranges read from
 * the base tables — with the columns the dimensions read (at, tenant_id, channel, team_id,
 * agent_id, target) and the additive parts of the metrics, and the sums that recombine them exactly
 * as the live metrics compute them: counts summed, averages as total sum ÷ total count in numeric.
 * Time dimensions are rolled only in zones a whole number of hours off UTC all through the window
 * (each UTC hour then lies in one local bucket); the caller decides that.
 */
export interface RolledSource {
  sql: string;
  bindings: any[];
}

export interface Rolled {
  dimensions: string[];
  sums: string;
  source: (ctx: Ctx, f: Filters, cov: Coverage, groupBy: string, tz: string) => RolledSource;
}

const NIL = '00000000-0000-0000-0000-000000000000';
const TIME_BUCKETS: Record<string, string> = { week: 'week', month: 'month' };

/**
 * Where a dimension's rolled rows are and how they name the dimensions' columns, in the order every
 * source selects them: at, tenant_id, channel, team_id, agent_id, priority_id, status_id.
 * `report_rollup_hours` by time, channel and team; the agent rollups by agent (unassigned tickets
 * and unauthored replies under the nil key); the attribute rollups by priority and status (no team
 * or channel key: runs without a filter only).
 */
function rollupOf(groupBy: string): { table: string; columns: string; where: string } {
  const nil = (column: string) => `nullif(${column}, '${NIL}'::uuid)`;
  if (groupBy === 'agent') {
    return { table: 'report_rollup_agent_hours', columns: `h.channel, ${nil('h.team_key')} AS team_id, ${nil('h.agent_id')} AS agent_id, NULL::uuid AS priority_id, NULL::uuid AS status_id`, where: '' };
  }
  if (groupBy === 'priority' || groupBy === 'status') {
    const key = (attr: string) => (attr === groupBy ? nil('h.attr_key') : 'NULL::uuid');
    return {
      table: 'report_rollup_attr_hours',
      columns: `NULL::text AS channel, NULL::uuid AS team_id, NULL::uuid AS agent_id, ${key('priority')} AS priority_id, ${key('status')} AS status_id`,
      where: ` AND h.attr = '${groupBy}'`,
    };
  }
  return { table: 'report_rollup_hours', columns: `h.channel, ${nil('h.team_key')} AS team_id, NULL::uuid AS agent_id, NULL::uuid AS priority_id, NULL::uuid AS status_id`, where: '' };
}
/** The same columns of a live ticket row. */
const TICKET_KEYS = 't.tenant_id, t.channel, t.team_id';
const ticketKeys = (agentColumn = 't.assigned_agent_id') => `${TICKET_KEYS}, ${agentColumn}, t.priority_id, t.status_id`;

/** The rolled rows of a window: `SELECT h.hour, h.tenant_id, <dimension columns>, <parts> FROM <rollup> h WHERE <covered>`. */
function rolledRows(ctx: Ctx, f: Filters, cov: Coverage, groupBy: string, parts: string, nonEmpty: string): RolledSource {
  const covered = coveredSql(ctx, cov);
  const rf = rollupFilter(f);
  const r = rollupOf(groupBy);
  return {
    sql: `SELECT h.hour AS at, h.tenant_id, ${r.columns}, ${parts} FROM ${r.table} h WHERE ${covered.sql}${rf.sql}${r.where} AND ${nonEmpty}`,
    bindings: [...covered.bindings, ...rf.bindings],
  };
}
/** Priority and status are rolled up without team or channel: with a filter they read live. */
const UNFILTERED_ONLY = ['priority', 'status'];
export const rolledFor = (rolled: Rolled | undefined, groupBy: string, f: Filters) =>
  Boolean(rolled?.dimensions.includes(groupBy) && !(UNFILTERED_ONLY.includes(groupBy) && (f.team_id || f.channel)));

/** tickets_created: tickets created in the window, by creation hour. */
const created: Rolled = {
  dimensions: ['day', 'week', 'month', 'hour', 'weekday', 'channel', 'team', 'agent', 'priority', 'status'],
  sums: `sum(x.n)::int AS created, sum(x.frt_n)::int AS first_responded,
    (sum(x.frt_sum) / nullif(sum(x.frt_n), 0))::float8 AS avg_first_response_time_seconds, sum(x.res_n)::int AS resolved,
    (sum(x.res_sum) / nullif(sum(x.res_n), 0))::float8 AS avg_resolution_time_seconds, sum(x.reopened)::int AS reopened`,
  source: (ctx, f, cov, groupBy) => {
    const rolled = rolledRows(ctx, f, cov, groupBy, 'h.created AS n, h.frt_n, h.frt_sum, h.res_n, h.res_sum, h.reopened', 'h.created > 0');
    const filter = ticketFilter(f);
    return {
      sql: `${rolled.sql}
        UNION ALL
        SELECT t.created_at, ${ticketKeys()}, 1, (t.first_responded_at IS NOT NULL)::int,
               coalesce(extract(epoch FROM t.first_responded_at - t.created_at), 0), (t.resolved_at IS NOT NULL)::int,
               coalesce(extract(epoch FROM t.resolved_at - t.created_at), 0), (t.reopened_count > 0)::int
          FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
          JOIN tickets t ON t.tenant_id = ? AND t.created_at >= r.a AND t.created_at < r.b${filter.sql}`,
      bindings: [...rolled.bindings, cov.live.starts, cov.live.ends, ctx.tenantId, ...filter.bindings],
    };
  },
};

/** tickets_resolved: tickets whose resolution falls in the window, by resolution hour. */
const resolved: Rolled = {
  dimensions: ['day', 'week', 'month', 'hour', 'weekday', 'channel', 'team', 'agent', 'priority'],
  sums: 'sum(x.n)::int AS resolved, (sum(x.res_sum) / nullif(sum(x.n), 0))::float8 AS avg_resolution_time_seconds',
  source: (ctx, f, cov, groupBy) => {
    const rolled = rolledRows(ctx, f, cov, groupBy, 'h.resolved AS n, h.resolved_res_sum AS res_sum', 'h.resolved > 0');
    const filter = ticketFilter(f);
    return {
      sql: `${rolled.sql}
        UNION ALL
        SELECT t.resolved_at, ${ticketKeys()}, 1, extract(epoch FROM t.resolved_at - t.created_at)
          FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
          JOIN tickets t ON t.tenant_id = ? AND t.resolved_at >= r.a AND t.resolved_at < r.b${filter.sql}`,
      bindings: [...rolled.bindings, cov.live.starts, cov.live.ends, ctx.tenantId, ...filter.bindings],
    };
  },
};

/**
 * agent_replies: public staff replies and the distinct tickets replied to. A ticket (by agent: an
 * agent's ticket) has a reply in a bucket [s, e) exactly when its first reply there is either its
 * first reply ever (`prev` is null: counted by hour in the rollups) or follows a reply before s:
 * the reply gaps (prev, at] containing s with at < e, one per conversation under way at s (a GiST
 * probe at the window's start, and at each week's or month's start).
 *
 * By local day, hour of the day and weekday the run reads reply-buckets.ts: with conversations
 * that go on for days, a probe at each of a year's 365 day starts would read more rows than the
 * replies themselves.
 */
const replies: Rolled = {
  dimensions: ['agent', 'week', 'month', 'channel', 'team', 'priority'],
  sums: 'sum(x.n)::int AS public_replies, sum(x.firsts)::int AS tickets',
  source: (ctx, f, cov, groupBy, tz) => replyParts(ctx, f, cov, groupBy, tz, TIME_BUCKETS[groupBy]),
};

/** Dimensions a reply row answers by itself (its instant, its author). */
const OWN_DIMENSIONS = ['agent', 'day', 'week', 'month'];

/**
 * A reply-gap row's dimension columns: from its ticket, or — when neither the dimension nor a
 * filter needs the ticket — from the row alone, which spares a join to a ticket per row.
 */
export function gapKeys(f: Filters, groupBy: string): { columns: string; join: string; bindings: any[] } {
  if (!hasTicketFilter(f) && OWN_DIMENSIONS.includes(groupBy)) {
    return { columns: 'g.tenant_id, NULL::text, NULL::uuid, g.author_id, NULL::uuid, NULL::uuid', join: '', bindings: [] };
  }
  const filter = ticketFilter(f);
  return {
    columns: ticketKeys('g.author_id'),
    join: `\n        JOIN tickets t ON t.tenant_id = g.tenant_id AND t.id = g.ticket_id${filter.sql}`,
    bindings: filter.bindings,
  };
}

/** Replies and distinct tickets per bucket (per local `unit` when given, else over the whole window). */
function replyParts(ctx: Ctx, f: Filters, cov: Coverage, groupBy: string, tz: string, unit: string | undefined): RolledSource {
  const prev = groupBy === 'agent' ? 'g.prev_author_at' : 'g.prev_at';
  const rolled = rolledRows(ctx, f, cov, groupBy, 'h.replies AS n, h.reply_tickets AS firsts', 'h.replies > 0');
  const keys = gapKeys(f, groupBy);
  // The probes' instants: the window's start, or each local bucket's start within the window.
  const starts = unit
    ? `SELECT greatest(b.local AT TIME ZONE '${tz}', ?::timestamptz) AS s,
              least((b.local + interval '1 ${unit}') AT TIME ZONE '${tz}', ?::timestamptz) AS e
         FROM generate_series(date_trunc('${unit}', ?::timestamptz AT TIME ZONE '${tz}'),
                              (?::timestamptz - interval '1 microsecond') AT TIME ZONE '${tz}', interval '1 ${unit}') AS b(local)`
    : 'SELECT ?::timestamptz AS s, ?::timestamptz AS e';
  const startBindings = unit ? [f.from, f.to, f.from, f.to] : [f.from, f.to];
  return {
    sql: `${rolled.sql}
      UNION ALL
      SELECT g.at, ${keys.columns}, 1, (${prev} IS NULL)::int
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN report_reply_gaps g ON g.tenant_id = ? AND g.at >= r.a AND g.at < r.b${keys.join}
      UNION ALL
      SELECT p.s, ${keys.columns}, 0, 1
        FROM (${starts}) p
        JOIN report_reply_gaps g ON g.tenant_id = ? AND ${prev} IS NOT NULL AND tstzrange(${prev}, g.at, '(]') @> p.s
         -- "ends before e" as a range operator too, so the index rejects the longer gaps itself.
         AND tstzrange(${prev}, g.at, '(]') &< tstzrange(p.s, p.e, '[)') AND g.at < p.e${keys.join}`,
    bindings: [...rolled.bindings, cov.live.starts, cov.live.ends, ctx.tenantId, ...keys.bindings,
      ...startBindings, ctx.tenantId, ...keys.bindings],
  };
}

/**
 * sla_outcomes: by target, time, channel or team `report_rollup_sla_hours` (per target); by agent
 * or priority the agent and attribute rollups (all targets together: the run has no target there).
 */
const sla: Rolled = {
  dimensions: ['target', 'day', 'week', 'month', 'channel', 'team', 'agent', 'priority'],
  sums: `sum(x.n)::int AS decided, sum(x.on_time)::int AS met_on_time, (sum(x.n) - sum(x.on_time))::int AS breached,
    sum(x.on_time)::float8 / sum(x.n) AS compliance_rate`,
  source: (ctx, f, cov, groupBy) => {
    const filter = ticketFilter(f);
    const live = SLA_TARGETS.map((target) => `
        SELECT ${outcomeAt(target)}::timestamptz, ${ticketKeys()}, '${target}'::text, 1, ((t.sla->'${target}'->>'breached_at') IS NULL)::int
          FROM tickets t
         WHERE t.tenant_id = ? AND (${textRanges(outcomeAt(target), cov.live.starts.length)})${filter.sql}`).join('\n        UNION ALL');
    const liveBindings = SLA_TARGETS.flatMap(() => [ctx.tenantId, ...rangeBindings(cov.live), ...filter.bindings]);
    if (groupBy === 'agent' || groupBy === 'priority') {
      const rolled = rolledRows(ctx, f, cov, groupBy, 'NULL::text AS target, h.sla_decided AS n, h.sla_on_time AS on_time', 'h.sla_decided > 0');
      return { sql: `${rolled.sql}\n        UNION ALL${live}`, bindings: [...rolled.bindings, ...liveBindings] };
    }
    const covered = coveredSql(ctx, cov);
    const rf = rollupFilter(f);
    return {
      sql: `
        SELECT h.hour AS at, h.tenant_id, h.channel, nullif(h.team_key, '${NIL}'::uuid) AS team_id, NULL::uuid AS agent_id,
               NULL::uuid AS priority_id, NULL::uuid AS status_id, h.target, h.decided AS n, h.on_time
          FROM report_rollup_sla_hours h
         WHERE ${covered.sql}${rf.sql}
        UNION ALL${live}`,
      bindings: [...covered.bindings, ...rf.bindings, ...liveBindings],
    };
  },
};

/** csat_ratings by channel, team, agent or priority, by rating hour. */
const ratings: Rolled = {
  dimensions: ['channel', 'team', 'agent', 'priority'],
  sums: 'sum(x.n)::int AS ratings, (sum(x.score_sum)::numeric / sum(x.n))::float8 AS average_score',
  source: (ctx, f, cov, groupBy) => {
    const rolled = rolledRows(ctx, f, cov, groupBy, 'h.csat_ratings AS n, h.csat_score_sum AS score_sum', 'h.csat_ratings > 0');
    const filter = ticketFilter(f);
    return {
      sql: `${rolled.sql}
        UNION ALL
        SELECT s.submitted_at, ${ticketKeys()}, 1, s.score
          FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
          JOIN csat_surveys s ON s.tenant_id = ? AND s.submitted_at >= r.a AND s.submitted_at < r.b
          JOIN tickets t ON t.tenant_id = s.tenant_id AND t.id = s.ticket_id${filter.sql}`,
      bindings: [...rolled.bindings, cov.live.starts, cov.live.ends, ctx.tenantId, ...filter.bindings],
    };
  },
};

export const ROLLED: Record<string, Rolled> = {
  csat_ratings: ratings,
  tickets_created: created,
  tickets_resolved: resolved,
  agent_replies: replies,
  sla_outcomes: sla,
};
