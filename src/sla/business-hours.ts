import { DateTime } from 'luxon';
import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { uuidv7 } from '../core/ids.js';
import { paginatePage, type Page, type PageInput } from '../core/pagination.js';
import { toRfc3339 } from '../core/clock.js';
import { insertScoped, isUniqueViolation, scoped } from '../db/tenant-scope.js';
import { diff, recordAudit } from '../audit/service.js';
import {
  DEFAULT_BUSINESS_HOURS, TIME_OF_DAY, WEEKDAYS, businessHoursProblems, type BusinessHours, type DaySchedule, type HolidayDate,
  type WeekSchedule,
} from './calendar.js';
import { recheckRunningClocks } from './recheck.js';
import type { BusinessHoursInput, BusinessHoursOut, Holiday, HolidayCreate, HolidayUpdate } from './schemas.js';
import { cachedConfig } from '../db/config-cache.js';

/**
 * The tenant's business hours (one row, or the default when none) and holidays (CONTRACT §4).
 * A change reaches the running SLA clocks within a minute: the tenant's tickets with a running
 * clock are marked due, and the next escalation run replays them under the new calendar.
 */

interface HoursRow { timezone: string; schedule: WeekSchedule; updated_at: Date }

export async function loadBusinessHours(ctx: Ctx): Promise<BusinessHours & { updated_at: Date | null }> {
  return cachedConfig(ctx, 'business_hours', async () => {
    const row = await scoped<HoursRow>(ctx, 'business_hours').first('timezone', 'schedule', 'updated_at');
    if (!row) return { ...structuredClone(DEFAULT_BUSINESS_HOURS), updated_at: null };
    return { timezone: row.timezone, schedule: row.schedule, updated_at: row.updated_at };
  });
}

function hoursOut(hours: BusinessHours & { updated_at: Date | null }): BusinessHoursOut {
  return { timezone: hours.timezone, schedule: hours.schedule, updated_at: toRfc3339(hours.updated_at) };
}

export async function getBusinessHours(ctx: Ctx): Promise<BusinessHoursOut> {
  return hoursOut(await loadBusinessHours(ctx));
}

type DayInput = { open?: string; close?: string; is_closed?: boolean };

/**
 * Reads either body shape into a schedule, or the problems with it. A day left out is closed; a
 * closed day carries only `is_closed: true`; an open day needs `open` and `close`.
 */
export function parseBusinessHours(input: BusinessHoursInput): { hours: BusinessHours; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const topLevel = WEEKDAYS.filter((d) => input[d] !== undefined);
  if (input.schedule && topLevel.length > 0) {
    problems.push({ field: 'schedule', message: `cannot be combined with top-level weekday keys (${topLevel.join(', ')})` });
  }
  const days: Partial<Record<string, DayInput>> = input.schedule ?? input;
  const prefix = input.schedule ? 'schedule.' : '';
  const schedule = {} as WeekSchedule;
  for (const day of WEEKDAYS) {
    const d = days[day];
    const field = `${prefix}${day}`;
    let out: DaySchedule = { is_closed: true };
    if (d && d.is_closed === true) {
      if (d.open !== undefined || d.close !== undefined) problems.push({ field, message: 'a closed day carries only is_closed' });
    } else if (d) {
      if (d.open === undefined) problems.push({ field: `${field}.open`, message: 'is required' });
      else if (!TIME_OF_DAY.test(d.open)) problems.push({ field: `${field}.open`, message: 'must be HH:MM between 00:00 and 23:59' });
      if (d.close === undefined) problems.push({ field: `${field}.close`, message: 'is required' });
      else if (!TIME_OF_DAY.test(d.close)) problems.push({ field: `${field}.close`, message: 'must be HH:MM between 00:01 and 24:00' });
      if (d.open !== undefined && d.close !== undefined) out = { open: d.open, close: d.close };
    }
    schedule[day] = out;
  }
  const hours = { timezone: input.timezone, schedule };
  const known = new Set(problems.map((p) => p.field));
  for (const [field, message] of businessHoursProblems(hours, prefix)) if (!known.has(field)) problems.push({ field, message });
  return { hours, problems };
}

export async function putBusinessHours(ctx: Ctx, input: BusinessHoursInput): Promise<BusinessHoursOut> {
  const { hours, problems } = parseBusinessHours(input);
  if (problems.length > 0) throw errors.validation(problems);
  const before = await loadBusinessHours(ctx);
  await ctx.trx('business_hours')
    .insert({ tenant_id: ctx.tenantId, timezone: hours.timezone, schedule: JSON.stringify(hours.schedule), created_at: ctx.now, updated_at: ctx.now })
    .onConflict('tenant_id').merge(['timezone', 'schedule', 'updated_at']);
  await recordAudit(ctx, {
    action: 'business_hours.updated', resourceType: 'business_hours',
    changes: diff(before as unknown as Record<string, unknown>, hours as unknown as Record<string, unknown>, ['timezone', 'schedule']),
  });
  await recheckRunningClocks(ctx);
  return hoursOut({ ...hours, updated_at: ctx.now });
}

// ---- holidays ---------------------------------------------------------------------------------

interface HolidayRow { id: string; name: string; date: string; recurring: boolean; created_at: Date; updated_at: Date }

const holidayColumns = (ctx: Ctx) => ['id', 'name', ctx.trx.raw(`to_char(date, 'YYYY-MM-DD') as date`), 'recurring', 'created_at', 'updated_at'];

function holidayOut(row: HolidayRow): Holiday {
  return { id: row.id, name: row.name, date: row.date, recurring: row.recurring, created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)! };
}

function checkDate(date: string | undefined): void {
  if (date !== undefined && !DateTime.fromISO(date, { zone: 'UTC' }).isValid) throw errors.invalid('date', 'is not a calendar date');
}

/** Every holiday of the tenant, as the calendar needs them. */
export async function loadHolidays(ctx: Ctx): Promise<HolidayDate[]> {
  return cachedConfig(ctx, 'holidays', async () => {
    const rows: Array<{ date: string; recurring: boolean }> = await scoped(ctx, 'holidays').select(ctx.trx.raw(`to_char(date, 'YYYY-MM-DD') as date`), 'recurring');
    return rows.map((r) => ({ date: r.date, recurring: r.recurring }));
  });
}

export async function listHolidays(ctx: Ctx, query: PageInput): Promise<Page<Holiday>> {
  return paginatePage<HolidayRow, Holiday>(query, scoped(ctx, 'holidays').select(holidayColumns(ctx)).orderBy([{ column: 'date' }, { column: 'id' }]), holidayOut);
}

async function loadHoliday(ctx: Ctx, id: string): Promise<HolidayRow> {
  const row = await scoped<HolidayRow>(ctx, 'holidays').where({ id }).first(holidayColumns(ctx));
  if (!row) throw errors.notFound('holiday', id);
  return row;
}

async function writeHoliday<T>(date: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, 'holidays_date')) throw errors.alreadyExists('holiday', 'date', date);
    throw error;
  }
}

export async function createHoliday(ctx: Ctx, input: HolidayCreate): Promise<Holiday> {
  checkDate(input.date);
  const id = uuidv7(ctx.now.getTime());
  await writeHoliday(input.date, () => insertScoped(ctx, 'holidays', {
    id, name: input.name.trim(), date: input.date, recurring: input.recurring ?? false, created_at: ctx.now, updated_at: ctx.now,
  }));
  const row = await loadHoliday(ctx, id);
  await recordAudit(ctx, { action: 'holiday.created', resourceType: 'holiday', resourceId: id, changes: { name: row.name, date: row.date, recurring: row.recurring } });
  await recheckRunningClocks(ctx);
  return holidayOut(row);
}

export async function updateHoliday(ctx: Ctx, id: string, input: HolidayUpdate): Promise<Holiday> {
  checkDate(input.date);
  const before = await loadHoliday(ctx, id);
  const patch = { ...input, ...(input.name !== undefined ? { name: input.name.trim() } : {}) };
  if (Object.keys(patch).length > 0) {
    await writeHoliday(input.date ?? before.date, () => scoped(ctx, 'holidays').where({ id }).update({ ...patch, updated_at: ctx.now }));
  }
  const after = await loadHoliday(ctx, id);
  await recordAudit(ctx, {
    action: 'holiday.updated', resourceType: 'holiday', resourceId: id,
    changes: diff(before as unknown as Record<string, unknown>, after as unknown as Record<string, unknown>, ['name', 'date', 'recurring']),
  });
  await recheckRunningClocks(ctx);
  return holidayOut(after);
}

export async function deleteHoliday(ctx: Ctx, id: string): Promise<void> {
  const before = await loadHoliday(ctx, id);
  await scoped(ctx, 'holidays').where({ id }).delete();
  await recordAudit(ctx, { action: 'holiday.deleted', resourceType: 'holiday', resourceId: id, changes: { name: before.name, date: before.date, recurring: before.recurring } });
  await recheckRunningClocks(ctx);
}
