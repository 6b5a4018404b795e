import type { QueryBuilderType } from 'objection';
import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { Ticket } from './models.js';
import { sharedOrganizationIds } from './directory-links.js';
import { prepared } from '../db/prepared.js';
import { pinFromRow, selectConfigVersion } from '../db/config-cache.js';
import { selectModels } from '../db/model.js';
import { columnList } from '../db/column-list.js';

export const isStaffActor = (ctx: Ctx) => ctx.actor.role === 'admin' || ctx.actor.role === 'agent'
  || ctx.actor.type === 'cli' || ctx.actor.type === 'system';

export type TicketFilter = (qb: QueryBuilderType<Ticket>) => void;

/**
 * Restricts a ticket query to what ctx's actor may see: staff see every ticket of the tenant; a
 * customer sees the tickets they requested, plus those of organizations that share tickets with
 * their members (`sharedOrganizationIds`, wired with the directory). Returned as a function
 * because a query builder is thenable and must not pass through an await.
 */
export async function ticketVisibility(ctx: Ctx): Promise<TicketFilter> {
  if (isStaffActor(ctx)) return () => {};
  const customerId = ctx.actor.userId ?? '00000000-0000-0000-0000-000000000000';
  const organizations = await sharedOrganizationIds(ctx, customerId);
  return (qb) => {
    qb.where((w) => {
      w.where('tickets.requester_id', customerId);
      if (organizations.length) w.orWhereIn('tickets.organization_id', organizations);
    });
  };
}

/**
 * One ticket the actor may see (others, and other tenants' ids, are not found). `pinConfig`: the
 * same statement reads the tenant's configuration version and pins it (src/db/config-cache.ts),
 * for a write that changes no configuration and reads its ticket first (a reply).
 */
export async function loadVisibleTicket(ctx: Ctx, id: string, options: { forUpdate?: boolean; columns?: readonly string[]; pinConfig?: boolean } = {}): Promise<Ticket> {
  const visible = await ticketVisibility(ctx);
  const qb = Ticket.scoped(ctx).where('tickets.id', id);
  // Only these columns (the rest of the returned row is absent), for a read that answers with them.
  if (options.columns) qb.select(Ticket.raw(columnList(options.columns)));
  else if (options.pinConfig) qb.select('tickets.*');
  if (options.pinConfig) selectConfigVersion(ctx, qb);
  visible(qb);
  if (options.forUpdate) qb.forUpdate();
  // A lookup by key (a customer's visibility adds filters on the same row): prepared.
  const [ticket] = await selectModels(Ticket, prepared(qb.limit(1)));
  if (!ticket) throw errors.notFound('ticket', id);
  if (options.pinConfig) pinFromRow(ctx, ticket);
  return ticket;
}
