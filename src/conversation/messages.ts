import type { Ctx } from '../core/context.js';
import { errors, isAppError } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { paginateUnbounded, type CursorMeta, type Page } from '../core/pagination.js';
import { emitMessageCreated } from '../events/emit/ticket-message.js';
import { Attachment, Message, Ticket, type Channel } from '../tickets/models.js';
import { openStatus, statusById } from '../vocab/lookup.js';
import { htmlToText, sanitizeMessageHtml } from './html.js';
import { runMessageHooks } from './hooks.js';
import { adoptInlineImages, attachmentSummary } from './attachment-output.js';
import { archiveReader, changeTicketStatus, isStaffActor, loadVisibleTicket } from './ticket-port.js';
import type { Message as MessageOut, MessageCreate, MessageListQuery } from './schemas.js';
import { scoped, tenantRow } from '../db/tenant-scope.js';
import { prepared } from '../db/prepared.js';
import { writeBehind } from '../db/write-behind.js';
import type { CompanionRows } from '../db/companion-rows.js';

/**
 * A ticket's conversation: public replies and private notes. `addMessage` is THE way a message
 * enters a ticket, whatever the door (this API, inbound mail, chat, channels), so its rules hold
 * everywhere:
 * - a closed ticket is final: `409 conflict`;
 * - customers write public messages only (`is_private` from a customer is `403`), and never see
 *   private ones;
 * - HTML is sanitised; without a plain body the text is derived from the HTML;
 * - the first public staff reply stamps `first_responded_at`;
 * - a customer's public message reopens a `resolved` ticket, and moves a ticket in a status that
 *   pauses the SLA to `open` (CONTRACT §5, §11), through the tickets area's status change;
 * - `ticket.message_created` is recorded with the spec's payload, then the message hooks run; the
 *   ticket columns they answer are written with the reply's own.
 */

export interface MessageAuthor {
  id: string | null;
  name: string;
  isAgent: boolean;
}

export interface NewMessage extends MessageCreate {
  channel?: Channel;
  /** Who wrote it, when not ctx's actor (inbound mail and chat act as the system for a person). */
  author?: MessageAuthor;
}

function authorOf(ctx: Ctx, input: NewMessage): MessageAuthor {
  if (input.author) return input.author;
  return { id: ctx.actor.userId, name: ctx.actor.name, isAgent: isStaffActor(ctx) };
}

export function messageOut(message: Message, attachments: Attachment[] = []): MessageOut {
  return {
    id: message.id,
    ticket_id: message.ticket_id,
    body: message.body,
    body_html: message.body_html,
    is_private: message.is_private,
    author_id: message.author_id,
    author_name: message.author_name,
    is_agent: message.is_agent,
    channel: message.channel,
    attachments: attachments.map(attachmentSummary),
    delivery: message.delivery ?? null,
    created_at: toRfc3339(message.created_at)!,
  };
}

/** The plain and HTML bodies to store, or the problem with them. */
function bodies(input: MessageCreate): { body: string; body_html: string | null } {
  const html = input.body_html === undefined ? null : sanitizeMessageHtml(input.body_html);
  if (input.body !== undefined) return { body: input.body, body_html: html };
  if (html === null) throw errors.invalid('body', 'is required (or send body_html)');
  const text = htmlToText(html);
  if (!text) throw errors.invalid('body_html', 'holds no text once sanitised; send body as well');
  return { body: text, body_html: html };
}

export async function addMessage(ctx: Ctx, ticketId: string, input: NewMessage): Promise<MessageOut> {
  const author = authorOf(ctx, input);
  const isPrivate = input.is_private ?? false;
  if (isPrivate && !author.isAgent) throw errors.forbidden('Customers cannot write private notes');
  // The row lock orders concurrent replies on one ticket (first response, reopening). A reply
  // changes no configuration: the same statement pins the configuration version, so its SLA,
  // webhook and mail reads may come from the cache.
  let ticket = await loadVisibleTicket(ctx, ticketId, { forUpdate: true, pinConfig: true });
  const status = (await statusById(ctx, ticket.status_id))!;
  if (status.category === 'closed') {
    throw errors.conflict(`Ticket ${ticket.ticket_number} is closed; a closed ticket is final`, { reason: 'ticket_closed' });
  }
  const { body, body_html } = bodies(input);

  const row = {
    ticket_id: ticket.id,
    body,
    body_html,
    is_private: isPrivate,
    author_id: author.id,
    author_name: author.name,
    is_agent: author.isAgent,
    channel: input.channel ?? 'api',
    created_at: ctx.now,
  };
  // A message with HTML is written first: its inline images are adopted (attachments point at it)
  // before the event's consumers read them. A plain one is written by its event's own statement,
  // one round trip less for the common reply; the consumers run after that statement either way.
  let message: Message;
  let attachments: Attachment[] = [];
  let writes: CompanionRows[] | undefined;
  if (body_html) {
    message = await Message.insertIn(ctx, row);
    attachments = await adoptInlineImages(ctx, message, body_html);
  } else {
    const full = tenantRow(ctx, row);
    message = Message.fromDatabaseJson({ ...full, delivery: null }) as Message;
    writes = [{ table: 'messages', rows: [full] }];
  }

  await emitMessageCreated(ctx, {
    ticket_id: ticket.id,
    ticket_number: Number(ticket.ticket_number),
    message_id: message.id,
    author_id: author.id,
    author_name: author.name,
    is_agent: author.isAgent,
    is_private: isPrivate,
    body,
    body_html,
  }, { ticket }, writes);

  // A customer's message reopens the ticket first, through THE status change (its own write,
  // events and hooks, the SLA clock's status entry before the reply's).
  if (!author.isAgent && !isPrivate && (status.category === 'resolved' || status.pauses_sla)) {
    const open = await openStatus(ctx);
    if (open && open.id !== status.id) ticket = await changeTicketStatus(ctx, ticket, open);
  }
  // The reply's own columns, and those its hooks derive (the SLA clock's), written in one UPDATE:
  // one new version of the ticket row per reply. The hooks see the ticket as the reply leaves it.
  // Held and sent with the COMMIT (src/db/write-behind.ts): the row is locked, nothing reads the
  // answer, and the reply's event and mail rows go in the same round trip.
  const columns: Record<string, unknown> = { updated_at: ctx.now };
  if (author.isAgent && !isPrivate && !ticket.first_responded_at) columns.first_responded_at = ctx.now;
  Object.assign(ticket, columns);
  const derived = await runMessageHooks(ctx, { ticket, message });
  await writeBehind(prepared(scoped(ctx, 'tickets').where({ id: ticket.id }).update({ ...derived, ...columns })));
  return messageOut(message, attachments);
}

/** A ticket's messages, oldest first; customers see public ones only. */
export async function listMessages(ctx: Ctx, ticketId: string, query: MessageListQuery): Promise<Page<MessageOut, CursorMeta>> {
  let ticket: Ticket;
  try {
    ticket = await loadVisibleTicket(ctx, ticketId);
  } catch (error) {
    // An archived ticket's messages come from the archive, all in one page (CONTRACT §19).
    if (!isAppError(error) || error.code !== 'resource_not_found') throw error;
    const archived = await archiveReader()?.messages(ctx, ticketId);
    if (!archived) throw error;
    return { data: archived, meta: { page_size: archived.length, next_cursor: null } as CursorMeta };
  }
  const qb = Message.scoped(ctx).where('messages.ticket_id', ticket.id);
  if (!isStaffActor(ctx)) qb.where('messages.is_private', false);
  const page = await paginateUnbounded<Message, Message>(query, qb.toKnexQuery(), { table: 'messages', direction: 'asc' });
  const ids = page.data.map((m) => m.id);
  const attachments = ids.length
    ? await Attachment.scoped(ctx).whereIn('attachments.message_id', ids).orderBy('attachments.created_at').orderBy('attachments.id')
    : [];
  const byMessage = new Map<string, Attachment[]>();
  for (const a of attachments) byMessage.set(a.message_id!, [...(byMessage.get(a.message_id!) ?? []), a]);
  return { data: page.data.map((m) => messageOut(m, byMessage.get(m.id))), meta: page.meta };
}
