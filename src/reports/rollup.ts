import type { Knex } from 'knex';
import { SYSTEM_ACTOR, type Ctx, type Deps } from '../core/context.js';
import { inTransaction } from '../db/transaction.js';
import { listTenants } from '../tenants/service.js';
import { hoursSincePrevious, rollupCounts, rollupTotals, WEEK_HOURS } from './reply-firsts.js';

/**
 * Hourly report rollups (docs/reports.md "Rollups"). `report_rollup_hours` holds, per tenant, UTC
 * hour, team and channel, the additive parts of the overview figures; triggers mark every hour a
 * later change touches dirty in that change's transaction (migration 20261127150000). A report
 * over [from, to) reads rollup rows for the whole hours that are rolled up and clean, and computes
 * everything else — partial edge hours, hours not rolled up yet, dirty hours — live from the base
 * tables over the remaining time ranges, so its answer equals the live definition.
 */

const HOUR_MS = 3_600_000;
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** Half-open time ranges, as two parallel arrays for `unnest(?::timestamptz[], ?::timestamptz[])`. */
interface Ranges {
  starts: Date[];
  ends: Date[];
}

export interface Coverage {
  /** The rolled-up hours read from `report_rollup_hours`: `lo <= hour < hi`, dirty ones excepted. */
  lo: Date;
  hi: Date;
  dirty: Date[];
  /** What is computed live: the window minus the covered hours. */
  live: Ranges;
}

const floorHour = (d: Date) => new Date(Math.floor(d.getTime() / HOUR_MS) * HOUR_MS);
const ceilHour = (d: Date) => new Date(Math.ceil(d.getTime() / HOUR_MS) * HOUR_MS);

/** Merges sorted half-open ranges that touch. */
function merged(ranges: Array<[Date, Date]>): Ranges {
  const out: Ranges = { starts: [], ends: [] };
  for (const [a, b] of ranges) {
    if (a >= b) continue;
    const last = out.ends.length - 1;
    if (last >= 0 && out.ends[last]!.getTime() >= a.getTime()) {
      if (b > out.ends[last]!) out.ends[last] = b;
    } else {
      out.starts.push(a);
      out.ends.push(b);
    }
  }
  return out;
}

/**
 * Runs a rollup-backed report in one snapshot: the rollup state, the dirty hours and the figures
 * are read in one REPEATABLE READ, read-only transaction (or the caller's own), so a change that
 * commits meanwhile is seen by all of them or none. JIT is off: these statements are short but
 * their plans are large, and compiling them cost hundreds of milliseconds for nothing. Parallel
 * plans are off too: the live part joins a few small time ranges to an index, and a parallel plan
 * cannot drive an index from them, so it scanned the whole tickets table instead (a 30-day run by
 * priority took 450 ms instead of 5).
 */
const SNAPSHOT_SETTINGS = 'SET LOCAL jit = off; SET LOCAL max_parallel_workers_per_gather = 0';

export async function inReportSnapshot<T>(ctx: Ctx, fn: (ctx: Ctx) => Promise<T>): Promise<T> {
  if ((ctx.trx as Knex.Transaction).isTransaction) {
    await ctx.trx.raw(SNAPSHOT_SETTINGS);
    return fn(ctx);
  }
  return (ctx.trx as Knex).transaction(async (trx) => {
    await trx.raw(SNAPSHOT_SETTINGS);
    return fn({ ...ctx, trx });
  }, { isolationLevel: 'repeatable read', readOnly: true });
}

/** Which part of [from, to) the rollups answer, and which ranges are computed live. */
export async function coverage(ctx: Ctx, from: Date, to: Date, useRollups = true): Promise<Coverage> {
  const lo = ceilHour(from);
  let hi = floorHour(to);
  if (useRollups && lo < hi) {
    const state = await ctx.trx('report_rollup_state').where({ tenant_id: ctx.tenantId }).first('rolled_until');
    const until = state ? new Date(state.rolled_until) : lo;
    if (until < hi) hi = until;
  }
  if (!useRollups || lo >= hi) return { lo: from, hi: from, dirty: [], live: { starts: [from], ends: [to] } };
  // An hour may hold several marks (each marking statement appends one): its distinct hours.
  const dirty = (await ctx.trx('report_rollup_dirty')
    .where({ tenant_id: ctx.tenantId }).andWhere('hour', '>=', lo).andWhere('hour', '<', hi)
    .distinct('hour').orderBy('hour').pluck('hour')).map((h: Date | string) => new Date(h));
  const live = merged([[from, lo], ...dirty.map((h): [Date, Date] => [h, new Date(h.getTime() + HOUR_MS)]), [hi, to]]);
  return { lo, hi, dirty, live };
}

/** `AND h.team_key = ? AND h.channel = ?` for the report filters, over rollup rows. */
export function rollupFilter(f: { team_id: string | null; channel: string | null }): { sql: string; bindings: any[] } {
  let sql = '';
  const bindings: any[] = [];
  if (f.team_id) {
    sql += ' AND h.team_key = ?';
    bindings.push(f.team_id);
  }
  if (f.channel) {
    sql += ' AND h.channel = ?';
    bindings.push(f.channel);
  }
  return { sql, bindings };
}

/** The covered rollup rows: `h.tenant_id = ? AND h.hour >= ? AND h.hour < ? AND h.hour <> ALL(?)`. */
export function coveredSql(ctx: Ctx, c: Coverage): { sql: string; bindings: any[] } {
  return { sql: 'h.tenant_id = ? AND h.hour >= ? AND h.hour < ? AND h.hour <> ALL(?::timestamptz[])', bindings: [ctx.tenantId, c.lo, c.hi, c.dirty] };
}

/**
 * `(expr >= ? AND expr < ?) OR …` for `n` ranges: explicit ranges let the planner use each index
 * range (a join to unnest() does not prove partial-index predicates and misjudges joins). With
 * `rangeBindings` for RFC 3339 text (the SLA instants), Date bindings for timestamptz.
 */
export const textRanges = (expr: string, n: number) =>
  Array.from({ length: n }, () => `(${expr} >= ? AND ${expr} < ?)`).join(' OR ') || 'false';
export const rangeBindings = (ranges: Ranges) => ranges.starts.flatMap((a, i) => [a.toISOString(), ranges.ends[i]!.toISOString()]);

const decided = (target: string) => `coalesce(t.sla->'${target}'->>'breached_at', t.sla->'${target}'->>'met_at')`;
const hourOf = (expr: string) => `date_trunc('hour', ${expr}, 'UTC')`;

/** Deletes a rollup table's rows of the given hour ranges before they are recomputed. */
async function clearHours(ctx: Ctx, table: string, ranges: Ranges): Promise<void> {
  await ctx.trx.raw(`
    DELETE FROM ${table} h USING unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
     WHERE h.tenant_id = ? AND h.hour >= r.a AND h.hour < r.b`, [ranges.starts, ranges.ends, ctx.tenantId]);
}

/**
 * Recomputes the rollup rows of the given whole hours from the base tables (each source exactly as
 * the live report reads it). Replaces what was there; idempotent.
 */
async function rollHours(ctx: Ctx, ranges: Ranges): Promise<void> {
  if (!ranges.starts.length) return;
  const r = [ranges.starts, ranges.ends];
  await clearHours(ctx, 'report_rollup_hours', ranges);
  const sla = ['first_response', 'next_response', 'resolution'].map((target) => `
      SELECT ${hourOf(`${decided(target)}::timestamptz`)} AS hour, t.team_id, t.channel,
             0, 0::numeric, 0, 0::numeric, 0, 0, 0, 0, 0,
             ((t.sla->'${target}'->>'breached_at') IS NULL)::int, 1, 0, 0, 0, 0, 0, 0, 0
        FROM tickets t
       WHERE t.tenant_id = ? AND (${textRanges(decided(target), ranges.starts.length)})`).join('\n      UNION ALL');
  await ctx.trx.raw(`
    INSERT INTO report_rollup_hours (tenant_id, hour, team_key, channel, created, frt_sum, frt_n, res_sum, res_n,
                                     reopened, ever_resolved, one_touch, resolved, sla_on_time, sla_decided,
                                     csat_ratings, csat_score_sum, csat_sent, csat_answered, resolved_res_sum, replies, reply_tickets)
    SELECT ?, x.hour, coalesce(x.team_id, ?::uuid), x.channel, sum(x.created), sum(x.frt_sum), sum(x.frt_n), sum(x.res_sum), sum(x.res_n),
           sum(x.reopened), sum(x.ever_resolved), sum(x.one_touch), sum(x.resolved), sum(x.sla_on_time), sum(x.sla_decided),
           sum(x.csat_ratings), sum(x.csat_score_sum), sum(x.csat_sent), sum(x.csat_answered), sum(x.resolved_res_sum), sum(x.replies),
           sum(x.reply_tickets)
      FROM (
      SELECT ${hourOf('t.created_at')} AS hour, t.team_id, t.channel,
             1 AS created, coalesce(extract(epoch FROM t.first_responded_at - t.created_at), 0) AS frt_sum, (t.first_responded_at IS NOT NULL)::int AS frt_n,
             coalesce(extract(epoch FROM t.resolved_at - t.created_at), 0) AS res_sum, (t.resolved_at IS NOT NULL)::int AS res_n,
             (t.reopened_count > 0)::int AS reopened, (t.resolved_at IS NOT NULL OR t.reopened_count > 0)::int AS ever_resolved,
             (t.resolved_at IS NOT NULL AND t.reopened_count = 0
               AND (SELECT count(*) FROM messages m WHERE m.tenant_id = t.tenant_id AND m.ticket_id = t.id AND m.is_agent AND NOT m.is_private) = 1)::int AS one_touch,
             0 AS resolved, 0 AS sla_on_time, 0 AS sla_decided, 0 AS csat_ratings, 0 AS csat_score_sum, 0 AS csat_sent, 0 AS csat_answered,
             0::numeric AS resolved_res_sum, 0 AS replies, 0 AS reply_tickets
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN tickets t ON t.tenant_id = ? AND t.created_at >= r.a AND t.created_at < r.b
      UNION ALL
      SELECT ${hourOf('t.resolved_at')}, t.team_id, t.channel, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
             extract(epoch FROM t.resolved_at - t.created_at), 0, 0
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN tickets t ON t.tenant_id = ? AND t.resolved_at >= r.a AND t.resolved_at < r.b
      UNION ALL
      SELECT ${hourOf('g.at')}, t.team_id, t.channel, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, (g.prev_at IS NULL)::int
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN report_reply_gaps g ON g.tenant_id = ? AND g.at >= r.a AND g.at < r.b
        JOIN tickets t ON t.tenant_id = g.tenant_id AND t.id = g.ticket_id
      UNION ALL${sla}
      UNION ALL
      SELECT ${hourOf('s.submitted_at')}, t.team_id, t.channel, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, s.score, 0, 0, 0, 0, 0
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN csat_surveys s ON s.tenant_id = ? AND s.submitted_at >= r.a AND s.submitted_at < r.b
        JOIN tickets t ON t.tenant_id = s.tenant_id AND t.id = s.ticket_id
      UNION ALL
      SELECT ${hourOf('s.created_at')}, t.team_id, t.channel, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, (s.submitted_at IS NOT NULL)::int, 0, 0, 0
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN csat_surveys s ON s.tenant_id = ? AND s.created_at >= r.a AND s.created_at < r.b
        JOIN tickets t ON t.tenant_id = s.tenant_id AND t.id = s.ticket_id
      ) x
     GROUP BY x.hour, x.team_id, x.channel`,
  [ctx.tenantId, NIL_UUID,
    ...r, ctx.tenantId,
    ...r, ctx.tenantId,
    ...r, ctx.tenantId,
    ...[0, 1, 2].flatMap(() => [ctx.tenantId, ...rangeBindings(ranges)]),
    ...r, ctx.tenantId,
    ...r, ctx.tenantId]);
}

/**
 * Recomputes the agent rollup rows (`report_rollup_agent_hours`) of the given whole hours, each
 * source as the live agents report reads it. Replaces what was there; idempotent.
 */
async function rollAgentHours(ctx: Ctx, ranges: Ranges): Promise<void> {
  if (!ranges.starts.length) return;
  const r = [ranges.starts, ranges.ends];
  await clearHours(ctx, 'report_rollup_agent_hours', ranges);
  // Unassigned tickets and unauthored replies are kept under the nil agent key: catalog runs by
  // agent show them as their own row, the agents report (which joins users) never sees them.
  await ctx.trx.raw(`
    INSERT INTO report_rollup_agent_hours (tenant_id, hour, team_key, channel, agent_id, created, frt_sum, frt_n, res_sum, res_n,
                                           resolved, replies, csat_ratings, csat_score_sum, reopened, resolved_res_sum, reply_tickets,
                                           sla_decided, sla_on_time)
    SELECT ?, x.hour, coalesce(x.team_id, ?::uuid), x.channel, coalesce(x.agent_id, ?::uuid), sum(x.created), sum(x.frt_sum), sum(x.frt_n),
           sum(x.res_sum), sum(x.res_n), sum(x.resolved), sum(x.replies), sum(x.csat_ratings), sum(x.csat_score_sum), sum(x.reopened),
           sum(x.resolved_res_sum), sum(x.reply_tickets), sum(x.sla_decided), sum(x.sla_on_time)
      FROM (
      SELECT ${hourOf('t.created_at')} AS hour, t.team_id, t.channel, t.assigned_agent_id AS agent_id,
             1 AS created, coalesce(extract(epoch FROM t.first_responded_at - t.created_at), 0) AS frt_sum, (t.first_responded_at IS NOT NULL)::int AS frt_n,
             coalesce(extract(epoch FROM t.resolved_at - t.created_at), 0) AS res_sum, (t.resolved_at IS NOT NULL)::int AS res_n,
             0 AS resolved, 0 AS replies, 0 AS csat_ratings, 0 AS csat_score_sum, (t.reopened_count > 0)::int AS reopened,
             0::numeric AS resolved_res_sum, 0 AS reply_tickets, 0 AS sla_decided, 0 AS sla_on_time
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN tickets t ON t.tenant_id = ? AND t.created_at >= r.a AND t.created_at < r.b
      UNION ALL
      SELECT ${hourOf('t.resolved_at')}, t.team_id, t.channel, t.assigned_agent_id, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
             extract(epoch FROM t.resolved_at - t.created_at), 0, 0, 0
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN tickets t ON t.tenant_id = ? AND t.resolved_at >= r.a AND t.resolved_at < r.b
      UNION ALL
      SELECT ${hourOf('g.at')}, t.team_id, t.channel, g.author_id, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, (g.prev_author_at IS NULL)::int, 0, 0
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN report_reply_gaps g ON g.tenant_id = ? AND g.at >= r.a AND g.at < r.b
        JOIN tickets t ON t.tenant_id = g.tenant_id AND t.id = g.ticket_id
      UNION ALL
      SELECT ${hourOf('s.submitted_at')}, t.team_id, t.channel, t.assigned_agent_id, 0, 0, 0, 0, 0, 0, 0, 1, s.score, 0, 0, 0, 0, 0
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN csat_surveys s ON s.tenant_id = ? AND s.submitted_at >= r.a AND s.submitted_at < r.b
        JOIN tickets t ON t.tenant_id = s.tenant_id AND t.id = s.ticket_id
      UNION ALL${slaParts(ranges, (target) => `t.team_id, t.channel, t.assigned_agent_id, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, ((t.sla->'${target}'->>'breached_at') IS NULL)::int`)}
      ) x
     GROUP BY x.hour, x.team_id, x.channel, x.agent_id`,
  [ctx.tenantId, NIL_UUID, NIL_UUID, ...r, ctx.tenantId, ...r, ctx.tenantId, ...r, ctx.tenantId, ...r, ctx.tenantId, ...slaBindings(ctx, ranges)]);
}

/** One row per SLA target decided in the ranges: its decision hour, then `columns(target)`. */
function slaParts(ranges: Ranges, columns: (target: string) => string): string {
  return SLA_TARGET_KEYS.map((target) => `
      SELECT ${hourOf(`${decided(target)}::timestamptz`)}, ${columns(target)}
        FROM tickets t
       WHERE t.tenant_id = ? AND (${textRanges(decided(target), ranges.starts.length)})`).join('\n      UNION ALL');
}
const SLA_TARGET_KEYS = ['first_response', 'next_response', 'resolution'];
const slaBindings = (ctx: Ctx, ranges: Ranges) => SLA_TARGET_KEYS.flatMap(() => [ctx.tenantId, ...rangeBindings(ranges)]);

/**
 * Recomputes the attribute rollup rows (`report_rollup_attr_hours`) of the given whole hours: by
 * priority every catalog part, by current status the created parts, each from its live SQL.
 */
async function rollAttrHours(ctx: Ctx, ranges: Ranges): Promise<void> {
  if (!ranges.starts.length) return;
  const r = [ranges.starts, ranges.ends];
  await clearHours(ctx, 'report_rollup_attr_hours', ranges);
  await ctx.trx.raw(`
    INSERT INTO report_rollup_attr_hours (tenant_id, hour, attr, attr_key, created, frt_sum, frt_n, res_sum, res_n, reopened, resolved,
                                          resolved_res_sum, sla_decided, sla_on_time, csat_ratings, csat_score_sum, replies, reply_tickets)
    SELECT ?, x.hour, x.attr, coalesce(x.attr_key, ?::uuid), sum(x.created), sum(x.frt_sum), sum(x.frt_n), sum(x.res_sum), sum(x.res_n),
           sum(x.reopened), sum(x.resolved), sum(x.resolved_res_sum), sum(x.sla_decided), sum(x.sla_on_time), sum(x.csat_ratings),
           sum(x.csat_score_sum), sum(x.replies), sum(x.reply_tickets)
      FROM (
      SELECT ${hourOf('t.created_at')} AS hour, a.attr, a.attr_key,
             1 AS created, coalesce(extract(epoch FROM t.first_responded_at - t.created_at), 0) AS frt_sum, (t.first_responded_at IS NOT NULL)::int AS frt_n,
             coalesce(extract(epoch FROM t.resolved_at - t.created_at), 0) AS res_sum, (t.resolved_at IS NOT NULL)::int AS res_n,
             (t.reopened_count > 0)::int AS reopened, 0 AS resolved, 0::numeric AS resolved_res_sum, 0 AS sla_decided, 0 AS sla_on_time,
             0 AS csat_ratings, 0 AS csat_score_sum, 0 AS replies, 0 AS reply_tickets
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN tickets t ON t.tenant_id = ? AND t.created_at >= r.a AND t.created_at < r.b
       CROSS JOIN LATERAL (VALUES ('priority', t.priority_id), ('status', t.status_id)) AS a(attr, attr_key)
      UNION ALL
      SELECT ${hourOf('t.resolved_at')}, 'priority', t.priority_id, 0, 0, 0, 0, 0, 0, 1, extract(epoch FROM t.resolved_at - t.created_at), 0, 0, 0, 0, 0, 0
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN tickets t ON t.tenant_id = ? AND t.resolved_at >= r.a AND t.resolved_at < r.b
      UNION ALL
      SELECT ${hourOf('s.submitted_at')}, 'priority', t.priority_id, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, s.score, 0, 0
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN csat_surveys s ON s.tenant_id = ? AND s.submitted_at >= r.a AND s.submitted_at < r.b
        JOIN tickets t ON t.tenant_id = s.tenant_id AND t.id = s.ticket_id
      UNION ALL
      SELECT ${hourOf('g.at')}, 'priority', t.priority_id, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, (g.prev_at IS NULL)::int
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN report_reply_gaps g ON g.tenant_id = ? AND g.at >= r.a AND g.at < r.b
        JOIN tickets t ON t.tenant_id = g.tenant_id AND t.id = g.ticket_id
      UNION ALL${slaParts(ranges, (target) => `'priority', t.priority_id, 0, 0, 0, 0, 0, 0, 0, 0, 1, ((t.sla->'${target}'->>'breached_at') IS NULL)::int, 0, 0, 0, 0`)}
      ) x
     GROUP BY x.hour, x.attr, x.attr_key`,
  [ctx.tenantId, NIL_UUID, ...r, ctx.tenantId, ...r, ctx.tenantId, ...r, ctx.tenantId, ...r, ctx.tenantId, ...slaBindings(ctx, ranges)]);
}

/** The breach event types and their text instant, as the breaches list reads them (`events_sla_breaches`). */
export const BREACH_TYPES = ['ticket.first_response_breached', 'ticket.next_response_breached', 'ticket.sla_breached'];
/** An hour's start as the RFC 3339 text the breaches list compares `data->>'at'` with (`Date#toISOString`). */
const isoText = (expr: string) => `to_char((${expr}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Recomputes the breach rollup rows of the given whole hours: each hour counts the breach events
 * whose text instant lies in [hour, hour + 1 h) compared as text, exactly the live list's condition.
 */
async function rollBreachHours(ctx: Ctx, ranges: Ranges): Promise<void> {
  if (!ranges.starts.length) return;
  const r = [ranges.starts, ranges.ends];
  await clearHours(ctx, 'report_rollup_breach_hours', ranges);
  await ctx.trx.raw(`
    INSERT INTO report_rollup_breach_hours (tenant_id, hour, team_key, channel, breaches)
    SELECT ?, g.hour, coalesce(t.team_id, ?::uuid), coalesce(t.channel, ''), count(*)
      FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
     CROSS JOIN LATERAL generate_series(r.a, r.b - interval '1 hour', interval '1 hour') AS g(hour)
      JOIN events e ON e.tenant_id = ? AND e.type IN (${BREACH_TYPES.map(() => '?').join(', ')})
                   AND e.data->>'at' >= ${isoText('g.hour')} AND e.data->>'at' < ${isoText("g.hour + interval '1 hour'")}
      LEFT JOIN tickets t ON t.tenant_id = e.tenant_id AND t.id = e.ticket_id
     GROUP BY 2, 3, 4`, [ctx.tenantId, NIL_UUID, ...r, ctx.tenantId, ...BREACH_TYPES]);
}

/** Recomputes the per-target SLA outcome rollup rows of the given whole hours (as `rollHours` does its totals). */
async function rollSlaHours(ctx: Ctx, ranges: Ranges): Promise<void> {
  if (!ranges.starts.length) return;
  await clearHours(ctx, 'report_rollup_sla_hours', ranges);
  const targets = ['first_response', 'next_response', 'resolution'];
  const parts = targets.map((target) => `
      SELECT ${hourOf(`${decided(target)}::timestamptz`)} AS hour, t.team_id, t.channel, '${target}'::text AS target,
             ((t.sla->'${target}'->>'breached_at') IS NULL)::int AS on_time
        FROM tickets t
       WHERE t.tenant_id = ? AND (${textRanges(decided(target), ranges.starts.length)})`).join('\n      UNION ALL');
  await ctx.trx.raw(`
    INSERT INTO report_rollup_sla_hours (tenant_id, hour, team_key, channel, target, decided, on_time)
    SELECT ?, x.hour, coalesce(x.team_id, ?::uuid), x.channel, x.target, count(*), sum(x.on_time)
      FROM (${parts}) x
     GROUP BY x.hour, x.team_id, x.channel, x.target`,
  [ctx.tenantId, NIL_UUID, ...targets.flatMap(() => [ctx.tenantId, ...rangeBindings(ranges)])]);
}

/**
 * Recomputes the reply rollup rows (`report_rollup_reply_hours`) of the given whole hours: per
 * hour, team and channel of the reply's ticket, the public staff replies and how many are first of
 * their local day, UTC hour of the day and local weekday, for each day start 0..25 hours before
 * the hour (reply-firsts.ts); then their totals per hour (`report_rollup_reply_totals`), with the
 * replies first of their local week for each week start 0..169 hours before the hour.
 */
async function rollReplyHours(ctx: Ctx, ranges: Ranges): Promise<void> {
  if (!ranges.starts.length) return;
  await clearHours(ctx, 'report_rollup_reply_hours', ranges);
  await clearHours(ctx, 'report_rollup_reply_totals', ranges);
  const counts = rollupCounts('g', 'g.hour');
  // One read of the reply gaps feeds both tables: the per-team rows, whose inserted rows are summed
  // into the totals, and the totals' week flags. Those come from a histogram of the replies' hours
  // since their previous reply (plus an empty bucket at the cap), each bucket k's replies counted
  // for every j below k — step by step, the replies from bucket k up filling j from the bucket
  // below k to k - 1.
  await ctx.trx.raw(`
    WITH g AS MATERIALIZED (
      SELECT ${hourOf('x.at')} AS hour, x.*
        FROM unnest(?::timestamptz[], ?::timestamptz[]) AS r(a, b)
        JOIN report_reply_gaps x ON x.tenant_id = ? AND x.at >= r.a AND x.at < r.b
    ), h AS (
      INSERT INTO report_rollup_reply_hours (tenant_id, hour, team_key, channel, replies, day_firsts, hour_firsts, wday_firsts)
      SELECT ?, g.hour, coalesce(t.team_id, ?::uuid), t.channel, count(*), ${counts.dayFirsts}, ${counts.hourFirsts}, ${counts.wdayFirsts}
        FROM g JOIN tickets t ON t.tenant_id = g.tenant_id AND t.id = g.ticket_id
       GROUP BY g.hour, t.team_id, t.channel
      RETURNING tenant_id, hour, replies, hour_firsts, wday_firsts
    ), since AS (
      SELECT g.hour, ${hoursSincePrevious('g', 'g.hour')} AS k FROM g
    ), hist AS (
      SELECT x.hour, x.k, sum(x.n) AS n
        FROM (SELECT hour, k, 1 AS n FROM since UNION ALL SELECT DISTINCT hour, ${WEEK_HOURS}, 0 FROM since) x
       GROUP BY x.hour, x.k
    ), steps AS (
      SELECT hour, k, sum(n) OVER (PARTITION BY hour ORDER BY k DESC) AS from_k,
             coalesce(lag(k) OVER (PARTITION BY hour ORDER BY k), 0) AS below
        FROM hist
    ), weeks AS (
      SELECT s.hour, array_agg(s.from_k::int ORDER BY j) AS week_firsts
        FROM steps s CROSS JOIN LATERAL generate_series(s.below, s.k - 1) AS j
       GROUP BY s.hour
    )
    INSERT INTO report_rollup_reply_totals (tenant_id, hour, replies, hour_firsts, wday_firsts, week_firsts)
    SELECT h.tenant_id, h.hour, ${rollupTotals()}, w.week_firsts
      FROM h JOIN weeks w ON w.hour = h.hour
     GROUP BY h.tenant_id, h.hour, w.week_firsts`, [ranges.starts, ranges.ends, ctx.tenantId, ctx.tenantId, NIL_UUID]);
}

/**
 * Claims (locks) the dirty marks of hours in [from, to), skipping those locked elsewhere: the marks
 * of at most `limit` distinct hours, every mark of each (a mark is one marking statement's row, so
 * an hour changed many times holds many). Only the claimed marks are cleared afterwards.
 */
async function claimDirty(ctx: Ctx, from: Date | null, to: Date, limit: number): Promise<{ hours: Date[]; marks: string[] }> {
  const result = await ctx.trx.raw(`
    SELECT id, hour FROM report_rollup_dirty
     WHERE tenant_id = ? AND hour IN (SELECT DISTINCT hour FROM report_rollup_dirty WHERE tenant_id = ? AND hour >= ? AND hour < ? ORDER BY hour LIMIT ?)
     ORDER BY hour, id FOR UPDATE SKIP LOCKED`, [ctx.tenantId, ctx.tenantId, from ?? new Date(0), to, limit]);
  const rows = result.rows as Array<{ id: string; hour: Date }>;
  const hours = [...new Set(rows.map((row) => new Date(row.hour).getTime()))].map((ms) => new Date(ms));
  return { hours, marks: rows.map((row) => String(row.id)) };
}

async function clearDirty(ctx: Ctx, marks: string[]): Promise<void> {
  if (marks.length) await ctx.trx.raw('DELETE FROM report_rollup_dirty WHERE tenant_id = ? AND id = ANY(?::bigint[])', [ctx.tenantId, marks]);
}

const DIRTY_BATCH = 500;
const ADVANCE_CHUNK_MS = 31 * 24 * HOUR_MS;

/**
 * One tenant's run: advances `rolled_until` to the last whole hour before `now` (in chunks of a
 * month, one transaction each), then recomputes the dirty hours before it (batches of 500). Each
 * transaction first claims its dirty marks with FOR UPDATE SKIP LOCKED, then computes from the base
 * tables, then clears only the marks it claimed: a change that commits later has a mark of its own,
 * not claimed, so its hour is recomputed by the next run and no stale hour is ever left clean.
 */
async function rollTenant(deps: Deps, tenantId: string, now: Date): Promise<{ hours_rolled: number; dirty_recomputed: number }> {
  const totals = { hours_rolled: 0, dirty_recomputed: 0 };
  const target = floorHour(now);
  const run = <T>(fn: (ctx: Ctx) => Promise<T>) => inTransaction(deps, { tenantId, actor: SYSTEM_ACTOR, now }, fn);
  for (;;) {
    const step = await run(async (ctx) => {
      // The state row is the tenant's claim: a concurrent run skips the tenant.
      await ctx.trx.raw('INSERT INTO report_rollup_state (tenant_id, rolled_until) SELECT ?, coalesce(min(date_trunc(\'hour\', created_at, \'UTC\')), ?) FROM tickets WHERE tenant_id = ? ON CONFLICT (tenant_id) DO NOTHING', [tenantId, target, tenantId]);
      const state = (await ctx.trx.raw('SELECT rolled_until FROM report_rollup_state WHERE tenant_id = ? FOR UPDATE SKIP LOCKED', [tenantId])).rows[0];
      if (!state) return null;
      const from = new Date(state.rolled_until);
      if (from >= target) return null;
      const to = new Date(Math.min(target.getTime(), from.getTime() + ADVANCE_CHUNK_MS));
      const claimed = await claimDirty(ctx, from, to, 1_000_000);
      await rollHours(ctx, { starts: [from], ends: [to] });
      await rollAgentHours(ctx, { starts: [from], ends: [to] });
      await rollBreachHours(ctx, { starts: [from], ends: [to] });
      await rollSlaHours(ctx, { starts: [from], ends: [to] });
      await rollAttrHours(ctx, { starts: [from], ends: [to] });
      await rollReplyHours(ctx, { starts: [from], ends: [to] });
      await clearDirty(ctx, claimed.marks);
      await ctx.trx('report_rollup_state').where({ tenant_id: tenantId }).update({ rolled_until: to });
      return Math.round((to.getTime() - from.getTime()) / HOUR_MS);
    });
    if (step === null) break;
    totals.hours_rolled += step;
  }
  for (;;) {
    const done = await run(async (ctx) => {
      const state = await ctx.trx('report_rollup_state').where({ tenant_id: tenantId }).first('rolled_until');
      if (!state) return 0;
      const { hours, marks } = await claimDirty(ctx, null, new Date(state.rolled_until), DIRTY_BATCH);
      const ranges = merged(hours.map((h): [Date, Date] => [h, new Date(h.getTime() + HOUR_MS)]));
      await rollHours(ctx, ranges);
      await rollAgentHours(ctx, ranges);
      await rollBreachHours(ctx, ranges);
      await rollSlaHours(ctx, ranges);
      await rollAttrHours(ctx, ranges);
      await rollReplyHours(ctx, ranges);
      await clearDirty(ctx, marks);
      return hours.length;
    });
    totals.dirty_recomputed += done;
    if (done < DIRTY_BATCH) break;
  }
  return totals;
}

/** The `report-rollup` job: every tenant's rollups brought up to the last whole hour before `now`. */
export async function reportRollup(deps: Deps, now: Date): Promise<Record<string, number>> {
  const totals = { tenants: 0, hours_rolled: 0, dirty_recomputed: 0 };
  for (const tenant of await listTenants(deps.db)) {
    const one = await rollTenant(deps, tenant.id, now);
    totals.tenants += 1;
    totals.hours_rolled += one.hours_rolled;
    totals.dirty_recomputed += one.dirty_recomputed;
  }
  return totals;
}
