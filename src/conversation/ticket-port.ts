import type { Ctx } from '../core/context.js';
import type { Ticket } from '../tickets/models.js';
import { applyTicketChanges } from '../tickets/changes.js';
import type { StatusRow } from '../vocab/lookup.js';

/**
 * What the conversation needs from the tickets area, in one place: "may this actor see this
 * ticket" (the tickets area's visibility rule, organizations included) and "change its status"
 * (THE ticket change, so its events, resolution stamps and hooks such as the SLA clock apply to a
 * reply that reopens a ticket as to any other status change).
 */
export { isStaffActor, loadVisibleTicket } from '../tickets/visibility.js';
/** An archived ticket's messages are read from the archive (CONTRACT §19). */
export { archiveReader } from '../tickets/archive-port.js';

export async function changeTicketStatus(ctx: Ctx, ticket: Ticket, status: Pick<StatusRow, 'id'>): Promise<Ticket> {
  return applyTicketChanges(ctx, ticket, { status_id: status.id });
}
