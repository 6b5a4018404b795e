/**
 * Message-IDs and the reply marker (CONTRACT §14). Our ids name the ticket's thread: every mail of
 * a ticket carries `References: <ticket.<ticket id>@<domain>>` (the thread's root, plus the
 * customer's own first Message-ID when the ticket came by mail), so mail clients thread them and a
 * reply's headers lead back to the ticket even when the outbox row is long gone.
 */
export const REPLY_MARKER = '##- Reply above this line -##';

const ROOT_RE = /^<?ticket\.([0-9a-f-]{36})@[^>]+>?$/i;

export function domainOf(address: string): string {
  return address.split('@')[1]?.replace(/>$/, '').trim().toLowerCase() || 'helpdesk.invalid';
}

export const rootMessageId = (ticketId: string, domain: string) => `<ticket.${ticketId}@${domain}>`;
export const notificationMessageId = (notificationId: string, domain: string) => `<n.${notificationId}@${domain}>`;

/** The ticket id a root Message-ID of ours names, if it is one. */
export function ticketOfRootId(messageId: string): string | null {
  return ROOT_RE.exec(messageId.trim())?.[1]?.toLowerCase() ?? null;
}

/** `<a@b>` as stored and compared: angle brackets, no spaces, case kept (ids are case-sensitive). */
export function normaliseMessageId(value: string): string {
  const trimmed = value.trim().replace(/\s+/g, '');
  return trimmed.startsWith('<') ? trimmed : `<${trimmed}>`;
}

/** The ticket's number in a subject tag `[#123]`, if any. */
export function subjectTicketNumber(subject: string): number | null {
  const match = /\[#(\d{1,9})\]/.exec(subject);
  return match ? Number(match[1]) : null;
}
