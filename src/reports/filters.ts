import { IANAZone } from 'luxon';
import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { loadBusinessHours } from '../sla/business-hours.js';

/**
 * The query parameters every report shares (CONTRACT §18): the window `[from, to)`, by default the
 * 30 days before now; `team_id` and `channel` narrow the tickets; `tz` (default: the business-hours
 * timezone) decides local days and hours.
 */
export interface FilterInput {
  from?: string;
  to?: string;
  team_id?: string;
  channel?: string;
  tz?: string;
}

export interface Filters {
  from: Date;
  to: Date;
  tz: string;
  team_id: string | null;
  channel: string | null;
}

const DEFAULT_WINDOW_DAYS = 30;
/** The longest window a report covers (two years: a year with its previous period). */
const MAX_WINDOW_DAYS = 731;
const DAY_MS = 86_400_000;

export async function resolveFilters(ctx: Ctx, input: FilterInput): Promise<Filters> {
  const problems: FieldProblem[] = [];
  const to = input.to !== undefined ? new Date(input.to) : ctx.now;
  const from = input.from !== undefined ? new Date(input.from) : new Date(to.getTime() - DEFAULT_WINDOW_DAYS * DAY_MS);
  if (Number.isNaN(to.getTime())) problems.push({ field: 'to', message: 'must be an RFC 3339 timestamp' });
  if (Number.isNaN(from.getTime())) problems.push({ field: 'from', message: 'must be an RFC 3339 timestamp' });
  if (!problems.length && from >= to) problems.push({ field: 'from', message: 'must be before to' });
  if (!problems.length && to.getTime() - from.getTime() > MAX_WINDOW_DAYS * DAY_MS) {
    problems.push({ field: 'to', message: `must be at most ${MAX_WINDOW_DAYS} days after from` });
  }
  if (input.tz !== undefined && !IANAZone.isValidZone(input.tz)) problems.push({ field: 'tz', message: 'must be an IANA time zone name' });
  if (problems.length) throw errors.validation(problems);
  const tz = input.tz ?? (await loadBusinessHours(ctx)).timezone;
  return { from, to, tz: new IANAZone(tz).name, team_id: input.team_id ?? null, channel: input.channel ?? null };
}

/** The window just before: as long as the report's, ending where it starts (BI comparisons). */
export function previousPeriod(f: Filters): Filters {
  const span = f.to.getTime() - f.from.getTime();
  return { ...f, from: new Date(f.from.getTime() - span), to: f.from };
}

/** `AND <alias>.team_id = ? AND <alias>.channel = ?` for the filters given, with its bindings. */
export function ticketFilter(f: Filters, alias = 't'): { sql: string; bindings: any[] } {
  let sql = '';
  const bindings: any[] = [];
  if (f.team_id) {
    sql += ` AND ${alias}.team_id = ?`;
    bindings.push(f.team_id);
  }
  if (f.channel) {
    sql += ` AND ${alias}.channel = ?`;
    bindings.push(f.channel);
  }
  return { sql, bindings };
}

export const hasTicketFilter = (f: Filters) => Boolean(f.team_id || f.channel);

export const iso = (d: Date | string | null | undefined): string | null => (d == null ? null : new Date(d).toISOString());

/** A number from pg (numeric and bigint come as strings), null kept. */
export const num = (v: unknown): number | null => (v == null ? null : Number(v));
