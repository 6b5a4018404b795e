import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { hasTicketFilter, ticketFilter, type Filters } from './filters.js';
import { ROLLED, rolledFor } from './catalog-rollups.js';
import { slaOutcomesSql } from './overview.js';
import { REPLY_BUCKETS, replyBuckets, replyDays, replyWeeksRolled, type ReplyBucket } from './reply-buckets.js';
import { coverage, inReportSnapshot } from './rollup.js';
import { dayHoursFit, wholeHourZone } from './zone-offsets.js';

/**
 * The report catalog and `run` (CONTRACT §18): each report is a source of rows (tickets created,
 * tickets resolved, SLA targets decided, CSAT ratings, public staff replies in the window, with the
 * shared filters) grouped by one dimension into its metrics. docs/reports.md lists them.
 */
interface Source {
  /** A subquery with the columns tenant_id, at (the row's instant), channel, team_id, priority_id, status_id, agent_id, and the metrics' inputs. */
  sql: (ctx: Ctx, f: Filters, groupBy: string) => { sql: string; bindings: any[] };
}

interface Dimension {
  key: string;
  description: string;
  /** The group key; `label` adds a name column from a joined table (alias d). */
  sql: (tz: string) => string;
  label?: { table: string; column: string; ref: string };
  time?: boolean;
}

interface Metric {
  key: string;
  description: string;
  sql: string;
}

interface ReportDef {
  key: string;
  name: string;
  description: string;
  source: Source;
  dimensions: string[];
  metrics: Metric[];
}

const bucket = (interval: string) => (tz: string) => `(date_trunc('${interval}', x.at AT TIME ZONE '${tz}') AT TIME ZONE '${tz}')`;

const DIMENSIONS: Record<string, Dimension> = {
  day: { key: 'day', description: 'Local day of tz (its start)', sql: bucket('day'), time: true },
  week: { key: 'week', description: 'Local week of tz, from Monday (its start)', sql: bucket('week'), time: true },
  month: { key: 'month', description: 'Local month of tz (its start)', sql: bucket('month'), time: true },
  hour: { key: 'hour', description: 'Local hour of the day in tz, 0–23', sql: (tz) => `extract(hour FROM x.at AT TIME ZONE '${tz}')::int` },
  weekday: { key: 'weekday', description: 'Local weekday in tz, 0 = Monday', sql: (tz) => `(extract(isodow FROM x.at AT TIME ZONE '${tz}')::int - 1)` },
  channel: { key: 'channel', description: 'The ticket\'s channel', sql: () => 'x.channel' },
  team: { key: 'team', description: 'The ticket\'s team', sql: () => 'x.team_id', label: { table: 'teams', column: 'name', ref: 'team_id' } },
  priority: { key: 'priority', description: 'The ticket\'s priority', sql: () => 'x.priority_id', label: { table: 'priorities', column: 'key', ref: 'priority_id' } },
  status: { key: 'status', description: 'The ticket\'s current status', sql: () => 'x.status_id', label: { table: 'statuses', column: 'key', ref: 'status_id' } },
  agent: { key: 'agent', description: 'The assigned agent (replies: the author)', sql: () => 'x.agent_id', label: { table: 'users', column: 'name', ref: 'agent_id' } },
  target: { key: 'target', description: 'SLA target: first_response, next_response, resolution', sql: () => 'x.target' },
  score: { key: 'score', description: 'CSAT score 1–5', sql: () => 'x.score' },
  ticket: { key: 'ticket', description: 'One row per ticket (its number): an export', sql: () => 'x.ticket_number' },
};

const TICKET_COLUMNS = `t.tenant_id, t.channel, t.team_id, t.priority_id, t.status_id, t.assigned_agent_id AS agent_id, t.ticket_number,
  t.created_at, t.first_responded_at, t.resolved_at, t.reopened_count`;

const windowed = (column: string) => (ctx: Ctx, f: Filters) => {
  const filter = ticketFilter(f);
  return {
    sql: `SELECT ${column} AS at, ${TICKET_COLUMNS} FROM tickets t WHERE t.tenant_id = ? AND ${column} >= ? AND ${column} < ?${filter.sql}`,
    bindings: [ctx.tenantId, f.from, f.to, ...filter.bindings],
  };
};

const avgSeconds = (end: string) => `avg(extract(epoch FROM x.${end} - x.created_at))::float8`;

const REPORTS: ReportDef[] = [
  {
    key: 'tickets_created', name: 'Tickets created', description: 'Tickets created in the window, with their response and resolution times',
    source: { sql: windowed('t.created_at') },
    dimensions: ['day', 'week', 'month', 'hour', 'weekday', 'channel', 'team', 'priority', 'status', 'agent', 'ticket'],
    metrics: [
      { key: 'created', description: 'Tickets created', sql: 'count(*)::int' },
      { key: 'first_responded', description: 'Of them, with a first public staff reply', sql: 'count(x.first_responded_at)::int' },
      { key: 'avg_first_response_time_seconds', description: 'Average calendar seconds from creation to the first response', sql: avgSeconds('first_responded_at') },
      { key: 'resolved', description: 'Of them, resolved now', sql: 'count(x.resolved_at)::int' },
      { key: 'avg_resolution_time_seconds', description: 'Average calendar seconds from creation to the (current) resolution', sql: avgSeconds('resolved_at') },
      { key: 'reopened', description: 'Of them, reopened at least once', sql: 'count(*) FILTER (WHERE x.reopened_count > 0)::int' },
    ],
  },
  {
    key: 'tickets_resolved', name: 'Tickets resolved', description: 'Tickets whose current resolution falls in the window',
    source: { sql: windowed('t.resolved_at') },
    dimensions: ['day', 'week', 'month', 'hour', 'weekday', 'channel', 'team', 'priority', 'agent'],
    metrics: [
      { key: 'resolved', description: 'Tickets resolved', sql: 'count(*)::int' },
      { key: 'avg_resolution_time_seconds', description: 'Average calendar seconds from creation to resolution', sql: avgSeconds('resolved_at') },
    ],
  },
  {
    key: 'sla_outcomes', name: 'SLA outcomes', description: 'SLA targets decided (met or breached) in the window',
    source: {
      sql: (ctx, f) => {
        const o = slaOutcomesSql(ctx, f, ', t.tenant_id, t.channel, t.team_id, t.priority_id, t.status_id, t.assigned_agent_id AS agent_id');
        return { sql: `SELECT o.decided_at AS at, o.* FROM (${o.sql}) o`, bindings: o.bindings };
      },
    },
    dimensions: ['target', 'day', 'week', 'month', 'channel', 'team', 'priority', 'agent'],
    metrics: [
      { key: 'decided', description: 'Targets met or breached', sql: 'count(*)::int' },
      { key: 'met_on_time', description: 'Targets met before their due time', sql: 'count(*) FILTER (WHERE x.on_time)::int' },
      { key: 'breached', description: 'Targets breached (even if met later)', sql: 'count(*) FILTER (WHERE NOT x.on_time)::int' },
      { key: 'compliance_rate', description: 'met_on_time ÷ decided', sql: '(count(*) FILTER (WHERE x.on_time))::float8 / count(*)' },
    ],
  },
  {
    key: 'csat_ratings', name: 'CSAT ratings', description: 'Satisfaction ratings submitted in the window',
    source: {
      sql: (ctx, f, groupBy) => {
        const filter = ticketFilter(f);
        // By score or time with no filter, the ratings' own index answers (no ticket read).
        if (!hasTicketFilter(f) && ['score', 'day', 'week', 'month'].includes(groupBy)) {
          return {
            sql: 'SELECT s.submitted_at AS at, s.score, s.tenant_id FROM csat_surveys s WHERE s.tenant_id = ? AND s.submitted_at >= ? AND s.submitted_at < ?',
            bindings: [ctx.tenantId, f.from, f.to],
          };
        }
        return {
          sql: `SELECT s.submitted_at AS at, s.score, t.tenant_id, t.channel, t.team_id, t.priority_id, t.status_id, t.assigned_agent_id AS agent_id
                  FROM csat_surveys s JOIN tickets t ON t.tenant_id = s.tenant_id AND t.id = s.ticket_id
                 WHERE s.tenant_id = ? AND s.submitted_at >= ? AND s.submitted_at < ?${filter.sql}`,
          bindings: [ctx.tenantId, f.from, f.to, ...filter.bindings],
        };
      },
    },
    dimensions: ['score', 'day', 'week', 'month', 'channel', 'team', 'priority', 'agent'],
    metrics: [
      { key: 'ratings', description: 'Ratings', sql: 'count(*)::int' },
      { key: 'average_score', description: 'Average score (1–5)', sql: 'avg(x.score)::float8' },
    ],
  },
  {
    key: 'agent_replies', name: 'Public replies', description: 'Public staff replies written in the window',
    source: {
      sql: (ctx, f, groupBy) => {
        const filter = ticketFilter(f);
        // The tickets are joined only when a filter or the dimension needs them: replies by agent or
        // time are read from the replies' own index alone.
        if (!hasTicketFilter(f) && !['channel', 'team', 'priority'].includes(groupBy)) {
          return {
            sql: `SELECT m.created_at AS at, m.author_id AS agent_id, m.ticket_id, m.tenant_id FROM messages m
                   WHERE m.tenant_id = ? AND m.is_agent AND NOT m.is_private AND m.created_at >= ? AND m.created_at < ?`,
            bindings: [ctx.tenantId, f.from, f.to],
          };
        }
        return {
          sql: `SELECT m.created_at AS at, m.author_id AS agent_id, m.ticket_id, t.tenant_id, t.channel, t.team_id, t.priority_id, t.status_id
                  FROM messages m JOIN tickets t ON t.tenant_id = m.tenant_id AND t.id = m.ticket_id
                 WHERE m.tenant_id = ? AND m.is_agent AND NOT m.is_private AND m.created_at >= ? AND m.created_at < ?${filter.sql}`,
          bindings: [ctx.tenantId, f.from, f.to, ...filter.bindings],
        };
      },
    },
    dimensions: ['agent', 'day', 'week', 'month', 'hour', 'weekday', 'channel', 'team', 'priority'],
    metrics: [
      { key: 'public_replies', description: 'Public staff replies', sql: 'count(*)::int' },
      { key: 'tickets', description: 'Distinct tickets replied to', sql: 'count(DISTINCT x.ticket_id)::int' },
    ],
  },
];

export const REPORT_KEYS = REPORTS.map((r) => r.key);
export const FORMATS = ['json', 'csv'] as const;
/** Rows a JSON answer carries at most; the CSV form streams any number. */
const JSON_ROW_LIMIT = 10_000;
const PAGE = 5_000;

export function catalog() {
  return {
    data: REPORTS.map((r) => ({
      key: r.key, name: r.name, description: r.description,
      dimensions: r.dimensions.map((d) => ({ key: d, description: DIMENSIONS[d]!.description })),
      metrics: r.metrics.map((m) => ({ key: m.key, description: m.description })),
    })),
  };
}

export interface RunInput {
  report: string;
  group_by?: string;
}

export type Cell = string | number | null;

/** A prepared run: its columns and a reader of its rows in pages (keyset for the per-ticket form). */
export interface PreparedRun {
  report: string;
  group_by: string;
  columns: string[];
  pages(limit?: number): AsyncGenerator<Cell[][]>;
}

const SAFE_ZONE = /^[A-Za-z0-9_+\-/]+$/;

export function prepareRun(ctx: Ctx, f: Filters, input: RunInput): PreparedRun {
  const report = REPORTS.find((r) => r.key === input.report);
  if (!report) throw errors.invalid('report', `must be one of ${REPORT_KEYS.join(', ')}`);
  const groupBy = input.group_by ?? report.dimensions[0]!;
  if (!report.dimensions.includes(groupBy)) throw errors.invalid('group_by', `must be one of ${report.dimensions.join(', ')} for ${report.key}`);
  // The zone goes into the SQL text: it was checked against the IANA database, and is checked here again.
  if (!SAFE_ZONE.test(f.tz)) throw errors.invalid('tz', 'must be an IANA time zone name');
  const dim = DIMENSIONS[groupBy]!;
  const source = report.source.sql(ctx, f, groupBy);
  const key = dim.sql(f.tz);
  const label = dim.label;
  const metrics = report.metrics.map((m) => `${m.sql} AS "${m.key}"`).join(', ');
  const columns = [...(label ? [`${groupBy}_id`, `${groupBy}_name`] : [groupBy]), ...report.metrics.map((m) => m.key)];
  const toRow = (r: Record<string, unknown>): Cell[] => [
    cell(r.k, dim.time), ...(label ? [cell(r.label)] : []), ...report.metrics.map((m) => cell(r[m.key])),
  ];
  /**
   * Groups a source's rows by the dimension, then names the groups: the label (a team's name, an
   * agent's) is joined to the few groups, not to every row.
   */
  const grouped = (from: { sql: string; bindings: any[] }, aggregates: string) => ({
    sql: `SELECT g.*${label ? ', d.' + label.column + ' AS label' : ''}
            FROM (SELECT ${key} AS k, ${aggregates} FROM (${from.sql}) x GROUP BY 1) g
            ${label ? `LEFT JOIN ${label.table} d ON d.tenant_id = ? AND d.id = g.k` : ''}
           ORDER BY g.k NULLS FIRST${label ? ', label' : ''}`,
    bindings: [...from.bindings, ...(label ? [ctx.tenantId] : [])],
  });
  const rolled = rolledFor(ROLLED[report.key], groupBy, f) ? ROLLED[report.key] : undefined;
  const timeLike = dim.time || groupBy === 'hour' || groupBy === 'weekday';
  const first = (rows: Record<string, unknown>[], limit: number) => rows.slice(0, Number.isFinite(limit) ? limit : undefined).map(toRow);

  async function* pages(limit = Number.POSITIVE_INFINITY): AsyncGenerator<Cell[][]> {
    // Distinct tickets by local day, hour, weekday (and week without a filter): from the reply
    // rollups in a zone a whole number of hours off UTC; elsewhere by day from the reply gaps, by
    // hour and weekday the definition, by week the rollups and probes at each week's start.
    const replyBucket = report!.key === 'agent_replies' && (REPLY_BUCKETS.includes(groupBy) || replyWeeksRolled(groupBy, f));
    const wholeHours = replyBucket && dayHoursFit(f.tz, f.from, f.to);
    if (wholeHours || (replyBucket && groupBy === 'day')) {
      const rows = await inReportSnapshot(ctx, async (ctx) => {
        const q = grouped(wholeHours ? replyBuckets(ctx, f, await coverage(ctx, f.from, f.to), groupBy as ReplyBucket) : replyDays(ctx, f),
          ROLLED.agent_replies!.sums);
        return (await ctx.trx.raw(q.sql, q.bindings)).rows;
      });
      yield first(rows as Record<string, unknown>[], limit);
      return;
    }
    if (rolled) {
      const rows = await inReportSnapshot(ctx, async (ctx) => {
        const cov = await coverage(ctx, f.from, f.to, timeLike ? wholeHourZone(f.tz, f.from, f.to) : true);
        // With no rolled-up hour to read, the run is the definition itself, read live.
        const q = cov.lo < cov.hi || report!.key !== 'agent_replies' ? grouped(rolled.source(ctx, f, cov, groupBy, f.tz), rolled.sums) : grouped(source, metrics);
        return (await ctx.trx.raw(q.sql, q.bindings)).rows;
      });
      yield first(rows as Record<string, unknown>[], limit);
      return;
    }
    if (groupBy !== 'ticket') {
      const q = grouped(source, metrics);
      yield first((await ctx.trx.raw(q.sql, q.bindings)).rows as Record<string, unknown>[], limit);
      return;
    }
    // One row per ticket: pages in ticket-number order, each after the last one read.
    let after = 0;
    let left = limit;
    while (left > 0) {
      const size = Math.min(PAGE, left);
      const result = await ctx.trx.raw(
        `SELECT ${key} AS k, ${metrics} FROM (${source.sql}) x WHERE x.ticket_number > ? GROUP BY ${key} ORDER BY ${key} LIMIT ${size}`,
        [...source.bindings, after] as any[],
      );
      const rows = result.rows as Record<string, unknown>[];
      if (rows.length) yield rows.map(toRow);
      if (rows.length < size) return;
      after = Number(rows[rows.length - 1]!.k);
      left -= rows.length;
    }
  }
  return { report: report.key, group_by: groupBy, columns, pages };
}

function cell(value: unknown, time = false): Cell {
  if (value == null) return null;
  if (value instanceof Date) return value.toISOString();
  if (time) return new Date(value as string).toISOString();
  if (typeof value === 'number' || typeof value === 'string') return value;
  return String(value);
}

/** The JSON form: at most JSON_ROW_LIMIT rows; `truncated` says more exist (take the CSV). */
export async function runJson(ctx: Ctx, f: Filters, input: RunInput) {
  const run = prepareRun(ctx, f, input);
  const rows: Cell[][] = [];
  for await (const page of run.pages(JSON_ROW_LIMIT + 1)) rows.push(...page);
  const truncated = rows.length > JSON_ROW_LIMIT;
  return { report: run.report, group_by: run.group_by, from: f.from.toISOString(), to: f.to.toISOString(), tz: f.tz, columns: run.columns, rows: rows.slice(0, JSON_ROW_LIMIT), truncated };
}
