import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { paginatePage, type Page, type PageInput } from '../core/pagination.js';
import { scoped } from '../db/tenant-scope.js';
import { recordEvent } from '../events/record.js';
import { Ticket } from './models.js';
import { TicketLink as LinkRow } from './ops-models.js';
import { loadTicket, loadTicketPair, ticketLabel } from './ops-access.js';
import type { LinkInput, TicketLink } from './ops-schemas.js';

/**
 * Links relate two tickets of a tenant ("see also"). A link is symmetric: one row, visible from
 * both tickets, removable from either. Linking a pair twice, in either direction, is
 * `409 already_exists`: the caller learns the link is there and can find its id in the list.
 * Closed tickets may be linked (a customer writing to a closed ticket gets a new one linked to it).
 * Each change records `ticket.link_added` / `ticket.link_removed` on both tickets' timelines.
 */

type LinkedRow = { id: string; ticket_a_id: string; ticket_b_id: string; created_by: string | null; created_at: Date;
  other_id: string; other_number: number; other_subject: string; other_status_id: string };

function linkOut(ticketId: string, row: LinkedRow): TicketLink {
  return {
    id: row.id,
    ticket_id: ticketId,
    linked_ticket: { id: row.other_id, ticket_number: row.other_number, subject: row.other_subject, status_id: row.other_status_id },
    created_by: row.created_by,
    created_at: toRfc3339(row.created_at)!,
  };
}

/** The links of `ticketId`, each joined to the ticket at its other end. */
function linksOf(ctx: Ctx, ticketId: string) {
  return scoped(ctx, 'ticket_links as l')
    .join('tickets as o', function joinOther() {
      this.on('o.tenant_id', 'l.tenant_id')
        .andOn(ctx.trx.raw('o.id = case when l.ticket_a_id = ? then l.ticket_b_id else l.ticket_a_id end', [ticketId]));
    })
    .where((w) => w.where('l.ticket_a_id', ticketId).orWhere('l.ticket_b_id', ticketId))
    .select('l.*', 'o.id as other_id', 'o.ticket_number as other_number', 'o.subject as other_subject', 'o.status_id as other_status_id');
}

export async function listLinks(ctx: Ctx, id: string, query: PageInput): Promise<Page<TicketLink>> {
  await loadTicket(ctx, id);
  const qb = linksOf(ctx, id).orderBy('l.created_at', 'asc').orderBy('l.id', 'asc');
  return paginatePage<LinkedRow, TicketLink>(query, qb, (row) => linkOut(id, row));
}

export async function addLink(ctx: Ctx, id: string, input: LinkInput): Promise<TicketLink> {
  const [ticket, other] = await loadTicketPair(ctx, id, input.target_ticket_id, 'target_ticket_id');
  const [low, high] = ticket.id < other.id ? [ticket.id, other.id] : [other.id, ticket.id];
  // Both tickets are locked, so nobody links the pair between this look and the insert.
  if (await LinkRow.scoped(ctx).findOne({ ticket_a_id: low, ticket_b_id: high })) {
    throw errors.alreadyExists('ticket_link', 'target_ticket_id', other.id);
  }
  const link = await LinkRow.insertIn(ctx, { ticket_a_id: low, ticket_b_id: high, created_by: ctx.actor.userId, created_at: ctx.now });
  await recordLinkEvents(ctx, 'ticket.link_added', link.id, ticket, other);
  return linkOut(id, { ...link, other_id: other.id, other_number: other.ticket_number, other_subject: other.subject, other_status_id: other.status_id });
}

export async function removeLink(ctx: Ctx, id: string, linkId: string): Promise<void> {
  const ticket = await loadTicket(ctx, id);
  const link = await LinkRow.scoped(ctx).findOne({ 'ticket_links.id': linkId })
    .where((w) => w.where('ticket_a_id', id).orWhere('ticket_b_id', id));
  if (!link) throw errors.notFound('ticket_link', linkId);
  const other = await Ticket.findIn(ctx, link.ticket_a_id === id ? link.ticket_b_id : link.ticket_a_id);
  await LinkRow.scoped(ctx).where('ticket_links.id', linkId).delete();
  await recordLinkEvents(ctx, 'ticket.link_removed', link.id, ticket, other!);
}

/** One event on each ticket's timeline; `to` (added) or `from` (removed) names the other ticket. */
async function recordLinkEvents(ctx: Ctx, type: 'ticket.link_added' | 'ticket.link_removed', linkId: string, ticket: Ticket, other: Ticket) {
  for (const [self, peer] of [[ticket, other], [other, ticket]] as const) {
    const label = ticketLabel(peer);
    await recordEvent(ctx, {
      type, subjectType: 'ticket', ticketId: self.id,
      from: type === 'ticket.link_removed' ? label : null,
      to: type === 'ticket.link_added' ? label : null,
      data: { ticket_id: self.id, link_id: linkId, linked_ticket_id: peer.id, linked_ticket_number: peer.ticket_number, actor_id: ctx.actor.userId, actor_name: ctx.actor.name },
    });
  }
}
