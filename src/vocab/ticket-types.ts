import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { isUniqueViolation, scoped } from '../db/tenant-scope.js';
import { pgErrorOf } from '../db/pg-errors.js';
import { diff, recordAudit } from '../audit/service.js';
import { TicketType } from './models.js';
import type { TicketTypeCreate, TicketTypeOut, TicketTypeUpdate } from './schemas.js';

/**
 * Ticket types (SPEC "Configuration"). Names are unique per tenant, case-insensitively. A type that
 * tickets still carry cannot be deleted (`409 conflict`, `details.reason: "in_use"`): deleting it
 * would rewrite those tickets' history. Retire it with `active: false` instead; inactive types
 * stay on their tickets but new tickets and updates may not choose them.
 */
export function ticketTypeOut(t: TicketType): TicketTypeOut {
  return {
    id: t.id, name: t.name, description: t.description, active: t.active, position: t.position,
    created_at: toRfc3339(t.created_at)!, updated_at: toRfc3339(t.updated_at)!,
  };
}

async function load(ctx: Ctx, id: string): Promise<TicketType> {
  const row = await TicketType.findIn(ctx, id);
  if (!row) throw errors.notFound('ticket_type', id);
  return row;
}

function uniqueName<T>(name: string | undefined) {
  return (error: unknown): T => {
    if (isUniqueViolation(error, 'ticket_types_name')) throw errors.alreadyExists('ticket_type', 'name', String(name));
    throw error;
  };
}

export async function listTicketTypes(ctx: Ctx): Promise<{ data: TicketTypeOut[] }> {
  const rows = await TicketType.scoped(ctx).orderBy('position').orderBy('name').orderBy('id');
  return { data: rows.map(ticketTypeOut) };
}

export async function getTicketType(ctx: Ctx, id: string): Promise<TicketTypeOut> {
  return ticketTypeOut(await load(ctx, id));
}

export async function createTicketType(ctx: Ctx, input: TicketTypeCreate): Promise<TicketTypeOut> {
  const name = input.name.trim();
  const row = await TicketType.insertIn(ctx, {
    name, description: input.description ?? null, active: input.active ?? true, position: input.position ?? 0,
    created_at: ctx.now, updated_at: ctx.now,
  }).catch(uniqueName<TicketType>(name));
  await recordAudit(ctx, { action: 'ticket_type.created', resourceType: 'ticket_type', resourceId: row.id, changes: { name, active: row.active } });
  return ticketTypeOut(row);
}

export async function updateTicketType(ctx: Ctx, id: string, input: TicketTypeUpdate): Promise<TicketTypeOut> {
  const before = await load(ctx, id);
  const columns: Record<string, unknown> = {};
  if (input.name !== undefined) columns.name = input.name.trim();
  for (const field of ['description', 'active', 'position'] as const) if (input[field] !== undefined) columns[field] = input[field];
  const changes = diff(before as unknown as Record<string, unknown>, { ...before, ...columns }, ['name', 'description', 'active', 'position']);
  if (!Object.keys(changes).length) return ticketTypeOut(before);
  const rows = await TicketType.scoped(ctx).where('ticket_types.id', id).patch({ ...columns, updated_at: ctx.now } as never).returning('*')
    .catch(uniqueName<never>(columns.name as string | undefined)) as unknown as TicketType[];
  await recordAudit(ctx, { action: 'ticket_type.updated', resourceType: 'ticket_type', resourceId: id, changes });
  return ticketTypeOut(rows[0]!);
}

export async function deleteTicketType(ctx: Ctx, id: string): Promise<void> {
  const before = await load(ctx, id);
  const inUse = () => errors.conflict(`Ticket type ${before.name} is used by tickets; set active to false to retire it`, { reason: 'in_use' });
  if (await scoped(ctx, 'tickets').where('type_id', id).first('id')) throw inUse();
  // A ticket given this type meanwhile makes the foreign key refuse the delete: the same answer.
  await TicketType.scoped(ctx).where('ticket_types.id', id).delete().catch((error: unknown) => {
    if (pgErrorOf(error)?.code === '23503') throw inUse();
    throw error;
  });
  await recordAudit(ctx, { action: 'ticket_type.deleted', resourceType: 'ticket_type', resourceId: id, changes: { name: before.name } });
}
