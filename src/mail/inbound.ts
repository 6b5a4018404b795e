import { SYSTEM_ACTOR, type Actor, type Ctx, type Deps } from '../core/context.js';
import { uuidv7 } from '../core/ids.js';
import { inTransaction } from '../db/transaction.js';
import { findUserByAnyEmail, insertUser, type UserRow } from '../directory/user-store.js';
import { recordCustomerEvent } from '../directory/customer-events.js';
import { createTicket } from '../tickets/create.js';
import { Message, Ticket } from '../tickets/models.js';
import { Status } from '../vocab/models.js';
import { handleCalendarReply } from './calendar-replies.js';
import { addMailCollaborators, addTicketMessage, collaboratorAddresses, linkFollowUp, removeStoredFiles, storeMailAttachment } from './conversation-port.js';
import { MailMessageId } from './models.js';
import { parseInbound, type InboundMail } from './parse.js';
import type { InboundAnswer } from './schemas.js';
import { loadMailSettings } from './settings-store.js';
import { subjectTicketNumber, ticketOfRootId } from './threading.js';
import { ownAddressOf } from './transports.js';

/**
 * Inbound mail to tickets (CONTRACT §14), the ONE code path of the inbound route and the IMAP poll
 * job. In order:
 * 1. loop guards before anything is written: auto-replies, mail from our own address, calendar
 *    replies (handed to the meetings module);
 * 2. in one transaction: a Message-ID seen before is a re-delivery (ignored); a sender over the
 *    hourly limit is ignored (a mail loop cannot create thousands of tickets);
 * 3. threading: In-Reply-To/References naming a message of a ticket, else `[#<number>]` in the
 *    subject from the requester, a collaborator or staff; a closed ticket gets a new ticket instead;
 * 4. otherwise a new ticket (channel email, requester found or created by From, Cc as collaborators);
 * 5. attachments and inline images on the message; the Message-ID recorded with its ticket.
 */
export const SENDER_LIMIT_PER_HOUR = 20;

const MAIL_ACTOR: Actor = { ...SYSTEM_ACTOR, name: 'Inbound email' };

async function senderUser(ctx: Ctx, from: { address: string; name: string }): Promise<UserRow> {
  const existing = await findUserByAnyEmail(ctx, from.address);
  if (existing) return existing;
  const user = await insertUser(ctx, { email: from.address, name: from.name || from.address.split('@')[0]!, role: 'customer' });
  await recordCustomerEvent(ctx, 'customer.created', user);
  return user;
}

const isStaff = (user: UserRow | null) => !!user && user.active && (user.role === 'admin' || user.role === 'agent');

/** The ticket a reply belongs to, by its headers, then by its subject tag from a known participant. */
async function threadOf(ctx: Ctx, mail: InboundMail, known: UserRow | null): Promise<Ticket | null> {
  if (mail.references.length) {
    for (const id of mail.references) {
      const ticketId = ticketOfRootId(id);
      if (ticketId) {
        const ticket = await Ticket.findIn(ctx, ticketId);
        if (ticket) return ticket;
      }
    }
    const row = await MailMessageId.scoped(ctx).whereIn('message_id', mail.references).whereNotNull('ticket_id').orderBy('created_at', 'desc').first();
    if (row) return (await Ticket.findIn(ctx, row.ticket_id!)) ?? null;
  }
  const number = subjectTicketNumber(mail.subject);
  if (number === null) return null;
  const ticket = await Ticket.scoped(ctx).findOne({ 'tickets.ticket_number': number });
  if (!ticket) return null;
  if (known && (known.id === ticket.requester_id || isStaff(known))) return ticket;
  const collaborators = await collaboratorAddresses(ctx, ticket.id);
  return collaborators.some((c) => c.email.toLowerCase() === mail.from!.address) ? ticket : null;
}

async function storeFiles(ctx: Ctx, ticketId: string, messageId: string, mail: InboundMail, written: string[]): Promise<void> {
  let last: string | undefined;
  for (const file of mail.files) last = await storeMailAttachment(ctx, ticketId, messageId, file, written, last);
}

async function accept(ctx: Ctx, mail: InboundMail, written: string[]): Promise<InboundAnswer> {
  const from = mail.from!;
  if (await MailMessageId.scoped(ctx).where({ direction: 'in', message_id: mail.messageId }).first()) return { ignored: 'duplicate' };
  const hourAgo = new Date(ctx.now.getTime() - 3_600_000);
  const [{ count }] = await MailMessageId.scoped(ctx).where({ direction: 'in', from_address: from.address })
    .where('created_at', '>', hourAgo).count({ count: '*' }) as unknown as [{ count: string }];
  if (Number(count) >= SENDER_LIMIT_PER_HOUR) {
    ctx.deps.log.warn({ tenant_id: ctx.tenantId, from: from.address }, 'inbound mail over the per-sender limit ignored');
    return { ignored: 'rate_limited' };
  }
  // Claims the Message-ID first: a concurrent delivery of the same message waits here and then
  // finds it taken.
  const claimed = await ctx.trx('mail_message_ids')
    .insert({ tenant_id: ctx.tenantId, id: uuidv7(ctx.now.getTime()), direction: 'in', message_id: mail.messageId, from_address: from.address, created_at: ctx.now })
    .onConflict(ctx.trx.raw('(tenant_id, direction, message_id)')).ignore().returning('id') as { id: string }[];
  if (!claimed.length) return { ignored: 'duplicate' };

  const known = await findUserByAnyEmail(ctx, from.address);
  const ticket = await threadOf(ctx, mail, known);
  const closed = ticket ? (await Status.findIn(ctx, ticket.status_id))?.category === 'closed' : false;
  let answer: InboundAnswer;
  if (ticket && !closed) {
    const author = known ?? await senderUser(ctx, from);
    const message = await addTicketMessage(ctx, ticket.id, {
      body: mail.text, ...(mail.html ? { body_html: mail.html } : {}), channel: 'email',
      author: { id: author.id, name: author.name, isAgent: isStaff(author) },
    });
    await storeFiles(ctx, ticket.id, message.id, mail, written);
    answer = { ticket_id: ticket.id, message_id: message.id, created_ticket: false };
  } else {
    const requester = known ?? await senderUser(ctx, from);
    const created = await createTicket(ctx, {
      subject: mail.subject, body: mail.text, ...(mail.html ? { body_html: mail.html } : {}),
      requester_id: requester.id, channel: 'email',
    } as never);
    const first = await Message.scoped(ctx).where('messages.ticket_id', created.id).orderBy('created_at').orderBy('id').first();
    await storeFiles(ctx, created.id, first!.id, mail, written);
    const own = ownAddressOf(ctx.deps, await loadMailSettings(ctx));
    const cc = mail.cc.filter((c) => c.address !== from.address && c.address !== own);
    if (cc.length) await addMailCollaborators(ctx, created.id, cc.map((c) => ({ email: c.address, ...(c.name ? { name: c.name } : {}) })));
    // A closed ticket is final; the new one points back at it so the agent sees the history.
    if (ticket && closed) await linkFollowUp(ctx, created.id, ticket.id);
    answer = { ticket_id: created.id, message_id: first!.id, created_ticket: true };
  }
  await ctx.trx('mail_message_ids').where({ tenant_id: ctx.tenantId, id: claimed[0]!.id }).update({ ticket_id: answer.ticket_id });
  return answer;
}

/** Takes one raw message for a tenant; answers what became of it. */
export async function receiveInbound(deps: Deps, tenantId: string, raw: Buffer, now: Date, requestId: string | null = null): Promise<InboundAnswer> {
  const mail = await parseInbound(raw);
  if (!mail) return { ignored: 'malformed' };
  if (!mail.from) return { ignored: 'no_sender' };
  if (mail.autoReply) return { ignored: 'auto_reply' };
  // Files are written before their rows; if the transaction does not commit they are removed (by key).
  const written: string[] = [];
  try {
    return await inTransaction(deps, { tenantId, actor: MAIL_ACTOR, now, requestId }, async (ctx): Promise<InboundAnswer> => {
      const own = ownAddressOf(deps, await loadMailSettings(ctx));
      if (mail.from!.address === own) return { ignored: 'own_address' };
      if (mail.calendarReply) {
        await handleCalendarReply(ctx, { from: mail.from!.address, ics: mail.calendarReply });
        return { ignored: 'calendar_reply' };
      }
      return accept(ctx, mail, written);
    });
  } catch (error) {
    await removeStoredFiles(deps.config, written);
    throw error;
  }
}
