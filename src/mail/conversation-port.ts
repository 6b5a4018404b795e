import type { Ctx } from '../core/context.js';
import { AppError } from '../core/errors.js';
import type { InboundFile } from '../conversation/inbound-files.js';
import { addMessage, type MessageAuthor } from '../conversation/messages.js';
import { addCollaborator } from '../tickets/collaborators.js';
import { addLink } from '../tickets/links.js';
import { prepared } from '../db/prepared.js';

/**
 * What the mail channel takes from the conversation and the ticket operations, in one place, so
 * inbound mail follows the same rules as every other door:
 * - `addTicketMessage`: the conversation's `addMessage` (closed is final, sanitising, first
 *   response, reopening, message hooks such as the SLA clock);
 * - `storeMailAttachment`: the conversation's `storeInboundFile` (blob store, content sniffing), as
 *   the messaging channels keep their media;
 * - `addMailCollaborators` / `collaboratorAddresses` / `requesterAndCollaborators`: the ticket
 *   operations' collaborators (the last with the requester's user row, in one read);
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

export interface MailFile extends InboundFile { inline: boolean }

/** A mail's attachments and inline images are kept as every inbound file is. */
export { storeInboundFile as storeMailAttachment, removeStoredFiles } from '../conversation/inbound-files.js';

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

/** A user as the mail recipients read one: these columns of `users`. */
export const RECIPIENT_USER_COLUMNS = ['id', 'email', 'name', 'locale', 'role', 'active', 'notification_preferences'] as const;
export interface RecipientUserRow { id: string; email: string; name: string; locale: string | null; role: string; active: boolean; notification_preferences: unknown }
export interface CollaboratorAddress { user_id: string | null; email: string; name: string | null }

/** A ticket's collaborators, users resolved to their address, inactive users left out (bindings: tenant, ticket). */
const COLLABORATORS_SQL = `SELECT c.user_id, coalesce(u.email, c.email) AS email, coalesce(u.name, c.name) AS name
       FROM ticket_collaborators c LEFT JOIN users u ON u.tenant_id = c.tenant_id AND u.id = c.user_id
      WHERE c.tenant_id = ? AND c.ticket_id = ? AND (u.id IS NULL OR u.active)`;
const withAddress = <T extends { email: string }>(rows: T[]) => rows.filter((r) => r.email);

/** Everyone collaborating on a ticket, as mail recipients (users resolved to their address). */
export async function collaboratorAddresses(ctx: Ctx, ticketId: string): Promise<CollaboratorAddress[]> {
  const { rows } = await prepared(ctx.trx.raw(COLLABORATORS_SQL, [ctx.tenantId, ticketId])) as { rows: CollaboratorAddress[] };
  return withAddress(rows);
}

/**
 * The requester's user row and the ticket's collaborators (as `collaboratorAddresses`), in one
 * statement: a public staff reply mails them all.
 */
export async function requesterAndCollaborators(ctx: Ctx, requesterId: string, ticketId: string): Promise<{ requester: RecipientUserRow | null; collaborators: CollaboratorAddress[] }> {
  const { rows } = await prepared(ctx.trx.raw(
    `SELECT true AS is_requester, ${RECIPIENT_USER_COLUMNS.map((column) => `u.${column}`).join(', ')}
       FROM users u WHERE u.tenant_id = ? AND u.id = ?
     UNION ALL
     SELECT false, c.user_id, c.email, c.name, NULL, NULL, NULL, NULL FROM (${COLLABORATORS_SQL}) c`,
    [ctx.tenantId, requesterId, ctx.tenantId, ticketId],
  )) as { rows: Array<RecipientUserRow & { is_requester: boolean }> };
  const found = rows.find((row) => row.is_requester);
  const requester = found ? Object.fromEntries(RECIPIENT_USER_COLUMNS.map((column) => [column, found[column]])) as unknown as RecipientUserRow : null;
  const collaborators = rows.filter((row) => !row.is_requester).map(({ id, email, name }) => ({ user_id: id, email, name }));
  return { requester, collaborators: withAddress(collaborators) };
}
