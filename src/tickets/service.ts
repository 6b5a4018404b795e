import type { Ctx } from '../core/context.js';
import { applyTicketChanges } from './changes.js';
import { loadVisibleTicket } from './visibility.js';
import { TICKET_OUT_COLUMNS, ticketOut } from './output.js';
import type { TicketOut, TicketUpdate } from './schemas.js';
import { isAppError } from '../core/errors.js';
import { archiveReader } from './archive-port.js';

/** GET and PATCH /tickets/{id}; create is create.ts, the list list.ts. */
export async function getTicket(ctx: Ctx, id: string): Promise<TicketOut> {
  try {
    return ticketOut(await loadVisibleTicket(ctx, id, { columns: TICKET_OUT_COLUMNS }));
  } catch (error) {
    // Not in the hot tables: an archived ticket answers from the archive (CONTRACT §19).
    if (!isAppError(error) || error.code !== 'resource_not_found') throw error;
    const archived = await archiveReader()?.ticket(ctx, id);
    if (archived) return archived;
    throw error;
  }
}

/** Staff only (the route says so); the row is locked so concurrent changes apply one after another. */
export async function updateTicket(ctx: Ctx, id: string, input: TicketUpdate): Promise<TicketOut> {
  const ticket = await loadVisibleTicket(ctx, id, { forUpdate: true });
  return ticketOut(await applyTicketChanges(ctx, ticket, input));
}
