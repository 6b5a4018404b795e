import { Type, type Static } from '@sinclair/typebox';
import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import type { CursorMeta, Page } from '../core/pagination.js';
import { OrganizationRecord, UserRecord } from '../directory/models.js';
import { sharedOrganizationIds } from './directory-links.js';
import { listTickets } from './list.js';
import { isStaffActor } from './visibility.js';
import { TicketListQuery, type TicketOut } from './schemas.js';

/**
 * GET /users/{id}/tickets and GET /organizations/{id}/tickets: GET /tickets with the owner fixed,
 * so filters, conditions, sorts and both pagination forms are the list's own (list.ts), and so is
 * the visibility rule. The owner must be visible first: another tenant's id, or for a customer
 * anyone but themselves / an organization that is not theirs or does not share tickets, is 404,
 * so the route tells nothing about records the caller may not see.
 */
export const UserTicketsQuery = Type.Omit(TicketListQuery, ['requester_id']);
export type UserTicketsQuery = Static<typeof UserTicketsQuery>;
export const OrganizationTicketsQuery = Type.Omit(TicketListQuery, ['organization_id']);
export type OrganizationTicketsQuery = Static<typeof OrganizationTicketsQuery>;

/** The tickets `id` requested. */
export async function listUserTickets(ctx: Ctx, id: string, query: UserTicketsQuery): Promise<Page<TicketOut, CursorMeta>> {
  const visible = isStaffActor(ctx) ? Boolean(await UserRecord.findIn(ctx, id)) : id === ctx.actor.userId;
  if (!visible) throw errors.notFound('user', id);
  return listTickets(ctx, { ...query, requester_id: id });
}

/** The tickets of organization `id` (each ticket keeps the organization its requester had when it was opened). */
export async function listOrganizationTickets(ctx: Ctx, id: string, query: OrganizationTicketsQuery): Promise<Page<TicketOut, CursorMeta>> {
  const visible = isStaffActor(ctx)
    ? Boolean(await OrganizationRecord.findIn(ctx, id))
    : Boolean(ctx.actor.userId) && (await sharedOrganizationIds(ctx, ctx.actor.userId!)).includes(id);
  if (!visible) throw errors.notFound('organization', id);
  return listTickets(ctx, { ...query, organization_id: id });
}
