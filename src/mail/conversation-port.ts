import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Config } from '../core/config.js';
import type { Ctx } from '../core/context.js';
import { AppError } from '../core/errors.js';
import { uuidv7 } from '../core/ids.js';
import { addMessage, type MessageAuthor } from '../conversation/messages.js';
import { sniffContentType } from '../conversation/sniff.js';
import { blobStoreFor } from '../storage/store.js';
import { addCollaborator } from '../tickets/collaborators.js';
import { addLink } from '../tickets/links.js';
import { Attachment } from '../tickets/models.js';

/**
 * What the mail channel takes from the conversation and the ticket operations, in one place, so
 * inbound mail follows the same rules as every other door:
 * - `addTicketMessage`: the conversation's `addMessage` (closed is final, sanitising, first
 *   response, reopening, message hooks such as the SLA clock);
 * - `storeMailAttachment`: the conversation's blob store and content sniffing;
 * - `addMailCollaborators` / `collaboratorAddresses`: the ticket operations' collaborators;
 * - `linkFollowUp`: the ticket links, for a mail to a closed ticket that opened a new one.
 * The dependency points one way: src/mail imports these areas, they never import src/mail.
 */

export type { MessageAuthor };

export interface NewMailMessage {
  body: string;
  body_html?: string;
  channel: 'email';
  author: MessageAuthor;
}

export async function addTicketMessage(ctx: Ctx, ticketId: string, input: NewMailMessage): Promise<{ id: string }> {
  const message = await addMessage(ctx, ticketId, input);
  return { id: message.id };
}

export interface MailFile { filename: string; contentType: string; content: Buffer; inline: boolean }

/** Bytes of a file's start that sniffing looks at (as for uploads). */
const HEAD_BYTES = 4100;

/** Removes blobs stored by a transaction that did not commit (`written` holds their keys). */
export async function removeStoredFiles(config: Pick<Config, 'dataDir'>, keys: string[]): Promise<void> {
  const store = blobStoreFor(config);
  await Promise.all(keys.map((key) => store.delete(key).catch(() => undefined)));
}

/**
 * Keeps one attachment (or inline image) of an inbound mail on its message. The type is sniffed
 * from the bytes like an upload's (the mail's declared type is only a hint for text). `written`
 * collects the stored keys so the caller can remove them if the transaction rolls back (the row
 * goes with it). `after` keeps the ids, and so the listing, in the mail's order.
 */
export async function storeMailAttachment(ctx: Ctx, ticketId: string, messageId: string, file: MailFile, written: string[], after?: string): Promise<string> {
  let id = uuidv7(ctx.now.getTime());
  while (after && id <= after) id = uuidv7(ctx.now.getTime());
  const key = `${ctx.tenantId}/${id}`;
  written.push(key);
  await blobStoreFor(ctx.deps.config).put(key, Readable.from([file.content]));
  await Attachment.insertIn(ctx, {
    id, ticket_id: ticketId, message_id: messageId, uploaded_by: null,
    filename: file.filename, content_type: await sniffContentType(file.content.subarray(0, HEAD_BYTES), file.contentType),
    size: file.content.length, storage_key: key, sha256: createHash('sha256').update(file.content).digest('hex'), created_at: ctx.now,
  });
  return id;
}

/**
 * Refusals of addCollaborator that only mean "nothing to add": the person is already on the
 * ticket (409 already_exists) or is its requester (422 naming the field). Both are decided
 * before anything is written, so catching them leaves the mail's transaction intact.
 */
function isHarmlessRefusal(error: unknown): boolean {
  if (!(error instanceof AppError)) return false;
  if (error.code === 'already_exists') return true;
  const problems = Array.isArray(error.details) ? error.details as { message?: unknown }[] : [];
  return error.code === 'validation_failed' && problems.some((p) => p.message === "is the ticket's requester");
}

/** Cc addresses become collaborators; those already on the ticket (or its requester) are skipped. */
export async function addMailCollaborators(ctx: Ctx, ticketId: string, people: { email: string; name?: string }[]): Promise<number> {
  let added = 0;
  for (const person of people) {
    try {
      // A display name longer than the API accepts is cut rather than refused: the mail is not ours to fix.
      const name = person.name?.trim().slice(0, 200);
      await addCollaborator(ctx, ticketId, { email: person.email, ...(name ? { name } : {}) });
      added += 1;
    } catch (error) {
      if (!isHarmlessRefusal(error)) throw error;
    }
  }
  return added;
}

/** A mail to a closed ticket opened `ticketId`: relate it to the closed one ("see also"). */
export async function linkFollowUp(ctx: Ctx, ticketId: string, closedTicketId: string): Promise<void> {
  await addLink(ctx, ticketId, { target_ticket_id: closedTicketId });
}

/** Everyone collaborating on a ticket, as mail recipients (users resolved to their address). */
export async function collaboratorAddresses(ctx: Ctx, ticketId: string): Promise<{ user_id: string | null; email: string; name: string | null }[]> {
  const { rows } = await ctx.trx.raw(
    `SELECT c.user_id, coalesce(u.email, c.email) AS email, coalesce(u.name, c.name) AS name
       FROM ticket_collaborators c LEFT JOIN users u ON u.tenant_id = c.tenant_id AND u.id = c.user_id
      WHERE c.tenant_id = ? AND c.ticket_id = ? AND (u.id IS NULL OR u.active)`,
    [ctx.tenantId, ticketId],
  ) as { rows: { user_id: string | null; email: string; name: string | null }[] };
  return rows.filter((r) => r.email);
}
