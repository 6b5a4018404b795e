import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { paginatePage, type CursorMeta, type Page, type PageInput } from '../core/pagination.js';
import { isUniqueViolation } from '../db/tenant-scope.js';
import { compileConditions, type Condition } from '../tickets/conditions.js';
import { listTickets } from '../tickets/list.js';
import type { TicketListQuery, TicketOut } from '../tickets/schemas.js';
import { SavedFilterRecord } from './models.js';
import type { SavedFilter, SavedFilterCreate, SavedFilterUpdate } from './schemas.js';

/**
 * Saved filters (SPEC: "list own / create"): an agent's named conditions over the ticket list.
 * Each belongs to the user who made it; another agent's filter is not found (404), like another
 * tenant's. Conditions are validated with the ticket list's own compiler, so a saved filter holds
 * only what `GET /tickets?conditions=` accepts, and `GET /saved-filters/{id}/tickets` runs it there.
 */
export function savedFilterOut(row: SavedFilterRecord): SavedFilter {
  return {
    id: row.id, name: row.name, conditions: row.conditions, owner_id: row.owner_id,
    created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)!,
  };
}

function ownerOf(ctx: Ctx): string {
  if (!ctx.actor.userId) throw errors.forbidden('Saved filters belong to a user; sign in as one');
  return ctx.actor.userId;
}

const own = (ctx: Ctx) => SavedFilterRecord.scoped(ctx).where('saved_filters.owner_id', ownerOf(ctx));

async function loadOwn(ctx: Ctx, id: string): Promise<SavedFilterRecord> {
  const row = await own(ctx).findOne({ 'saved_filters.id': id });
  if (!row) throw errors.notFound('saved filter', id);
  return row;
}

async function saveName<T>(name: string | undefined, write: () => PromiseLike<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, 'saved_filters_name')) throw errors.alreadyExists('saved filter', 'name', name ?? '');
    throw error;
  }
}

export async function listSavedFilters(ctx: Ctx, query: PageInput): Promise<Page<SavedFilter>> {
  return paginatePage<SavedFilterRecord, SavedFilter>(query, own(ctx).orderByRaw('lower(saved_filters.name)').orderBy('saved_filters.id'), savedFilterOut);
}

export async function getSavedFilter(ctx: Ctx, id: string): Promise<SavedFilter> {
  return savedFilterOut(await loadOwn(ctx, id));
}

export async function createSavedFilter(ctx: Ctx, input: SavedFilterCreate): Promise<SavedFilter> {
  await compileConditions(ctx, input.conditions);
  const name = input.name.trim();
  const row = await saveName(name, () => SavedFilterRecord.insertIn(ctx, {
    owner_id: ownerOf(ctx), name, conditions: input.conditions, created_at: ctx.now, updated_at: ctx.now,
  }));
  return savedFilterOut(row);
}

export async function updateSavedFilter(ctx: Ctx, id: string, input: SavedFilterUpdate): Promise<SavedFilter> {
  await loadOwn(ctx, id);
  const columns: Record<string, unknown> = { updated_at: ctx.now };
  if (input.name !== undefined) columns.name = input.name.trim();
  if (input.conditions !== undefined) {
    await compileConditions(ctx, input.conditions);
    columns.conditions = input.conditions;
  }
  const [after] = await saveName(columns.name as string | undefined, () =>
    own(ctx).where('saved_filters.id', id).patch(columns as Partial<SavedFilterRecord>).returning('*'));
  return savedFilterOut(after!);
}

export async function deleteSavedFilter(ctx: Ctx, id: string): Promise<void> {
  await loadOwn(ctx, id);
  await own(ctx).where('saved_filters.id', id).delete();
}

/** The ticket list through a saved filter: its conditions AND the query's own filters. */
export async function savedFilterTickets(ctx: Ctx, id: string, query: Omit<TicketListQuery, 'conditions'>): Promise<Page<TicketOut, CursorMeta>> {
  const filter = await loadOwn(ctx, id);
  return listTickets(ctx, { ...query, conditions: JSON.stringify(filter.conditions as Condition[]) });
}
