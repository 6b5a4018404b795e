import type { Ctx } from '../core/context.js';
import { applyTicketChanges } from './changes.js';
import { loadVisibleTicket } from './visibility.js';
import { ticketOut } from './output.js';
import type { TicketOut, TicketUpdate } from './schemas.js';

/** GET and PATCH /tickets/{id}; create is create.ts, the list list.ts. */
export async function getTicket(ctx: Ctx, id: string): Promise<TicketOut> {
  return ticketOut(await loadVisibleTicket(ctx, id));
}

/** Staff only (the route says so); the row is locked so concurrent changes apply one after another. */
export async function updateTicket(ctx: Ctx, id: string, input: TicketUpdate): Promise<TicketOut> {
  const ticket = await loadVisibleTicket(ctx, id, { forUpdate: true });
  return ticketOut(await applyTicketChanges(ctx, ticket, input));
}
