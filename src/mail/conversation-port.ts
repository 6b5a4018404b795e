import { createHash } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { uuidv7 } from '../core/ids.js';
import { recordEvent } from '../events/record.js';
import { applyTicketChanges } from '../tickets/changes.js';
import { Attachment, Message, Ticket } from '../tickets/models.js';
import { sanitizeBodyHtml } from '../tickets/sanitize.js';
import { Status } from '../vocab/models.js';

/**
 * What the mail channel needs from areas being built on other branches, behind one seam each:
 * - `addTicketMessage`: the conversation's add-message service (`addMessage` in
 *   src/conversation/messages.ts, branch `conversation`). Same input and meaning; at the merge
 *   its body becomes `return addMessage(ctx, ticketId, input)`.
 * - `storeMailAttachment`: the conversation's blob store (src/storage/). Same key layout
 *   (`<data dir>/attachments/<tenant>/<id>`); at the merge it calls `blobStoreFor(config).put`.
 * - `addMailCollaborators` / `collaboratorAddresses`: the ticket operations' collaborators
 *   (src/tickets/collaborators.ts, branch `ops`). Reading works as soon as the table exists;
 *   adding becomes `addCollaborator(ctx, ticketId, {email, name})` (ignoring already_exists).
 */

export interface MessageAuthor { id: string | null; name: string; isAgent: boolean }

export interface NewMailMessage {
  body: string;
  body_html?: string;
  channel: 'email';
  author: MessageAuthor;
}

/** The status a customer's reply moves a resolved (or SLA-pausing) ticket to. */
async function openStatus(ctx: Ctx): Promise<Status | undefined> {
  return (await Status.scoped(ctx).findOne({ key: 'open' }))
    ?? (await Status.scoped(ctx).where('category', 'open').orderBy('position').first());
}

/** Stand-in for the conversation's addMessage: a public message, its event, first response, reopening. */
export async function addTicketMessage(ctx: Ctx, ticketId: string, input: NewMailMessage): Promise<{ id: string }> {
  const [ticket] = await Ticket.scoped(ctx).where('tickets.id', ticketId).forUpdate().limit(1);
  if (!ticket) throw errors.notFound('ticket', ticketId);
  const status = (await Status.findIn(ctx, ticket.status_id))!;
  if (status.category === 'closed') throw errors.conflict(`Ticket ${ticket.ticket_number} is closed; a closed ticket is final`, { reason: 'ticket_closed' });
  const bodyHtml = input.body_html === undefined ? null : sanitizeBodyHtml(input.body_html);
  const message = await Message.insertIn(ctx, {
    ticket_id: ticket.id, body: input.body, body_html: bodyHtml, is_private: false,
    author_id: input.author.id, author_name: input.author.name, is_agent: input.author.isAgent,
    channel: input.channel, created_at: ctx.now,
  });
  await recordEvent(ctx, {
    type: 'ticket.message_created', subjectType: 'ticket', ticketId: ticket.id,
    actor: { id: input.author.id, name: input.author.name },
    data: {
      ticket_id: ticket.id, ticket_number: Number(ticket.ticket_number), message_id: message.id,
      author_id: input.author.id, author_name: input.author.name, is_agent: input.author.isAgent, is_private: false,
      body: input.body, body_html: bodyHtml,
    },
  });
  const columns: Record<string, unknown> = { updated_at: ctx.now };
  if (input.author.isAgent && !ticket.first_responded_at) columns.first_responded_at = ctx.now;
  const [after] = await Ticket.scoped(ctx).where('tickets.id', ticket.id).patch(columns as never).returning('*') as unknown as Ticket[];
  if (!input.author.isAgent && (status.category === 'resolved' || status.pauses_sla)) {
    const open = await openStatus(ctx);
    if (open && open.id !== status.id) await applyTicketChanges(ctx, after!, { status_id: open.id });
  }
  return { id: message.id };
}

export interface MailFile { filename: string; contentType: string; content: Buffer; inline: boolean }

/**
 * Keeps one attachment (or inline image) of an inbound mail on its message. `written` collects the
 * stored paths so the caller can remove them if the transaction rolls back (the row goes with it).
 */
/** Removes files stored by a transaction that did not commit. */
export async function removeStoredFiles(paths: string[]): Promise<void> {
  await Promise.all(paths.map((path) => rm(path, { force: true })));
}

export async function storeMailAttachment(ctx: Ctx, ticketId: string, messageId: string, file: MailFile, written: string[], after?: string): Promise<string> {
  let id = uuidv7(ctx.now.getTime());
  while (after && id <= after) id = uuidv7(ctx.now.getTime());
  const key = `${ctx.tenantId}/${id}`;
  const path = join(ctx.deps.config.dataDir, 'attachments', key);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(`${path}.partial`, file.content, { mode: 0o600, flag: 'wx' });
  await rename(`${path}.partial`, path);
  written.push(path);
  try {
    await Attachment.insertIn(ctx, {
      id, ticket_id: ticketId, message_id: messageId, uploaded_by: null,
      filename: file.filename, content_type: file.contentType, size: file.content.length,
      storage_key: key, sha256: createHash('sha256').update(file.content).digest('hex'), created_at: ctx.now,
    });
  } catch (error) {
    await rm(path, { force: true });
    throw error;
  }
  return id;
}

async function hasCollaboratorsTable(ctx: Ctx): Promise<boolean> {
  const { rows } = await ctx.trx.raw("SELECT to_regclass('ticket_collaborators') IS NOT NULL AS present") as { rows: { present: boolean }[] };
  return rows[0]!.present;
}

/** Cc addresses become collaborators once the ticket operations (collaborators) are merged. */
export async function addMailCollaborators(ctx: Ctx, ticketId: string, people: { email: string; name?: string }[]): Promise<number> {
  void ctx; void ticketId; void people;
  return 0;
}

/** Everyone collaborating on a ticket, as mail recipients (users resolved to their address). */
export async function collaboratorAddresses(ctx: Ctx, ticketId: string): Promise<{ user_id: string | null; email: string; name: string | null }[]> {
  if (!(await hasCollaboratorsTable(ctx))) return [];
  const { rows } = await ctx.trx.raw(
    `SELECT c.user_id, coalesce(u.email, c.email) AS email, coalesce(u.name, c.name) AS name
       FROM ticket_collaborators c LEFT JOIN users u ON u.tenant_id = c.tenant_id AND u.id = c.user_id
      WHERE c.tenant_id = ? AND c.ticket_id = ? AND (u.id IS NULL OR u.active)`,
    [ctx.tenantId, ticketId],
  ) as { rows: { user_id: string | null; email: string; name: string | null }[] };
  return rows.filter((r) => r.email);
}
