import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { paginatePage, type Page, type PageInput } from '../core/pagination.js';
import { scoped } from '../db/tenant-scope.js';
import { TimeEntry as EntryRow } from './ops-models.js';
import { actingUserId, actsAsAdmin, loadTicket } from './ops-access.js';
import type { TimeEntry, TimeEntryCreate, TimeEntryUpdate } from './ops-schemas.js';

/**
 * Time entries: minutes an agent spent on a ticket (SPEC "Time entries"; the spec names only
 * `description`, the rest follows common helpdesk practice): `minutes` (1 to 1440), `description`,
 * `billable` (default true), `work_date` (the day worked, default today in UTC, never in the
 * future). An entry belongs to the agent who logged it; agents change and delete their own, admins
 * any. Time may be logged on closed tickets too (work is often recorded after the fact). Entries
 * are staff records, not ticket changes, so they record no timeline event.
 */

type EntryWithName = EntryRow & { user_name: string };

/** A `date` column comes back as a Date at local midnight: read it back in local time. */
function dateOnly(value: Date | string): string {
  if (typeof value === 'string') return value.slice(0, 10);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${value.getFullYear()}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
}

function entryOut(row: EntryWithName): TimeEntry {
  return {
    id: row.id,
    ticket_id: row.ticket_id,
    user_id: row.user_id,
    user_name: row.user_name,
    minutes: row.minutes,
    description: row.description,
    billable: row.billable,
    work_date: dateOnly(row.work_date),
    created_at: toRfc3339(row.created_at)!,
    updated_at: toRfc3339(row.updated_at)!,
  };
}

function entries(ctx: Ctx) {
  return scoped(ctx, 'time_entries as e')
    .join('users as u', function joinUser() {
      this.on('u.tenant_id', 'e.tenant_id').andOn('u.id', 'e.user_id');
    })
    .select('e.*', 'u.name as user_name');
}

/** The work date must be a real calendar day (the format allows 2026-02-30) and not after today. */
function checkWorkDate(ctx: Ctx, value: string | undefined): void {
  if (value === undefined) return;
  const date = new Date(`${value}T00:00:00.000Z`);
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value) throw errors.invalid('work_date', 'must be a calendar date');
  if (value > ctx.now.toISOString().slice(0, 10)) throw errors.invalid('work_date', 'must not be in the future');
}

export async function listTimeEntries(ctx: Ctx, ticketId: string, query: PageInput): Promise<Page<TimeEntry>> {
  await loadTicket(ctx, ticketId);
  const qb = entries(ctx).where('e.ticket_id', ticketId).orderBy('e.created_at', 'asc').orderBy('e.id', 'asc');
  return paginatePage<EntryWithName, TimeEntry>(query, qb, entryOut);
}

export async function createTimeEntry(ctx: Ctx, ticketId: string, input: TimeEntryCreate): Promise<TimeEntry> {
  const userId = actingUserId(ctx);
  await loadTicket(ctx, ticketId);
  checkWorkDate(ctx, input.work_date);
  const row = await EntryRow.insertIn(ctx, {
    ticket_id: ticketId, user_id: userId, minutes: input.minutes, description: input.description?.trim() || null,
    billable: input.billable ?? true, work_date: input.work_date ?? ctx.now.toISOString().slice(0, 10),
    created_at: ctx.now, updated_at: ctx.now,
  });
  return getEntry(ctx, row.id);
}

async function getEntry(ctx: Ctx, id: string): Promise<TimeEntry> {
  const row = await entries(ctx).where('e.id', id).first() as EntryWithName | undefined;
  if (!row) throw errors.notFound('time_entry', id);
  return entryOut(row);
}

/** The entry, locked, if the caller may change it: their own, or any for an admin. */
async function ownEntry(ctx: Ctx, id: string): Promise<EntryRow> {
  const userId = actingUserId(ctx);
  const row = await EntryRow.scoped(ctx).findOne({ 'time_entries.id': id }).forUpdate();
  if (!row) throw errors.notFound('time_entry', id);
  if (row.user_id !== userId && !actsAsAdmin(ctx.actor)) throw errors.forbidden('Agents may change only their own time entries');
  return row;
}

export async function updateTimeEntry(ctx: Ctx, id: string, input: TimeEntryUpdate): Promise<TimeEntry> {
  await ownEntry(ctx, id);
  checkWorkDate(ctx, input.work_date);
  const patch: Record<string, unknown> = { updated_at: ctx.now };
  if (input.minutes !== undefined) patch.minutes = input.minutes;
  if (input.description !== undefined) patch.description = input.description?.trim() || null;
  if (input.billable !== undefined) patch.billable = input.billable;
  if (input.work_date !== undefined) patch.work_date = input.work_date;
  await EntryRow.scoped(ctx).where('time_entries.id', id).patch(patch as never);
  return getEntry(ctx, id);
}

export async function deleteTimeEntry(ctx: Ctx, id: string): Promise<void> {
  await ownEntry(ctx, id);
  await EntryRow.scoped(ctx).where('time_entries.id', id).delete();
}

