import type { Actor, Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { scoped } from '../db/tenant-scope.js';
import { Status } from '../vocab/models.js';
import { Ticket } from './models.js';
import { loadVisibleTicket } from './visibility.js';

/**
 * What the ticket operations share: loading a ticket the caller may see (through the desk's one
 * visibility rule, visibility.ts), locking a pair, the closed-is-final check, user names and how
 * a ticket is named in the timeline.
 */

export const actsAsAdmin = (actor: Actor): boolean => actor.role === 'admin' || actor.type === 'cli' || actor.type === 'system';

/**
 * The ticket `id` as the caller may see it, else 404 (another tenant's id, or a customer's look
 * at someone else's ticket, is simply not found). `forUpdate` locks the row until ctx's
 * transaction ends, so two operations on one ticket run one after the other.
 */
export const loadTicket = loadVisibleTicket;

/**
 * The path ticket and another one named in the body, both locked. One statement locks them in id
 * order, so two operations on the same pair in opposite directions (A into B, B into A) never
 * deadlock: the second waits and then sees the first one's result.
 */
export async function loadTicketPair(ctx: Ctx, id: string, otherId: string, field: string): Promise<[Ticket, Ticket]> {
  await loadTicket(ctx, id);
  if (id === otherId) throw errors.invalid(field, 'must name another ticket');
  const rows = await Ticket.scoped(ctx).whereIn('tickets.id', [id, otherId]).orderBy('tickets.id').forUpdate();
  const ticket = rows.find((row) => row.id === id);
  const other = rows.find((row) => row.id === otherId);
  if (!ticket) throw errors.notFound('ticket', id);
  if (!other) throw errors.notFound('ticket', otherId);
  return [ticket, other];
}

export async function statusOf(ctx: Ctx, ticket: Ticket): Promise<Status> {
  const status = await Status.findIn(ctx, ticket.status_id);
  if (!status) throw new Error(`Ticket ${ticket.id} has no status ${ticket.status_id}`);
  return status;
}

/** A closed ticket is final (CONTRACT §5): 409 for operations that would change it. */
export async function assertNotClosed(ctx: Ctx, ticket: Ticket, what = 'This ticket'): Promise<Status> {
  const status = await statusOf(ctx, ticket);
  if (status.category === 'closed') {
    throw errors.conflict(`${what} is closed`, { reason: 'ticket_closed', ticket_id: ticket.id });
  }
  return status;
}

/** How the timeline names a ticket: `#42`. */
export const ticketLabel = (ticket: Pick<Ticket, 'ticket_number'>): string => `#${ticket.ticket_number}`;

export interface UserRef {
  id: string;
  name: string;
  email: string;
  role: string;
}

/** Users of ctx's tenant by id (unknown ids are left out). */
export async function usersById(ctx: Ctx, ids: readonly string[]): Promise<Map<string, UserRef>> {
  const unique = [...new Set(ids)];
  if (!unique.length) return new Map();
  const rows = await scoped<UserRef>(ctx, 'users').whereIn('id', unique).select('id', 'name', 'email', 'role');
  return new Map((rows as UserRef[]).map((row) => [row.id, row]));
}

/** The acting user's id; every ticket operation is done by a person (an API key acts as its owner). */
export function actingUserId(ctx: Ctx): string {
  if (!ctx.actor.userId) throw errors.forbidden('Only a signed-in user or a user\'s API key may do this');
  return ctx.actor.userId;
}
