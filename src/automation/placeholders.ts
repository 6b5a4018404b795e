import type { Ctx } from '../core/context.js';
import { OrganizationRecord, UserRecord } from '../directory/models.js';
import type { Ticket } from '../tickets/models.js';
import { Priority, Status } from '../vocab/models.js';

/**
 * Placeholders of canned responses and macro replies: `{{ticket.number}}`, `{{customer.name}}`…,
 * the notification templates' syntax (SPEC "Notification template"). An unknown placeholder is
 * refused when the text is saved (422 naming the field), so rendering never meets one it cannot
 * fill; a value that is missing (a ticket without organization) renders as empty text.
 */
export const PLACEHOLDERS = [
  'ticket.number', 'ticket.subject', 'ticket.status', 'ticket.priority',
  'customer.name', 'customer.first_name', 'customer.email', 'organization.name', 'agent.name', 'agent.first_name',
] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];

const PATTERN = /\{\{\s*([a-z_]+(?:\.[a-z_]+)*)\s*\}\}/g;

/** The placeholders a text uses, once each, in order of appearance. */
export function placeholdersIn(text: string): string[] {
  return [...new Set([...text.matchAll(PATTERN)].map((m) => m[1]!))];
}

/** The problem with a text's placeholders, or null. */
export function placeholderProblem(text: string): string | null {
  const unknown = placeholdersIn(text).filter((p) => !(PLACEHOLDERS as readonly string[]).includes(p));
  return unknown.length ? `uses unknown placeholder(s) ${unknown.map((p) => `{{${p}}}`).join(', ')}; known: ${PLACEHOLDERS.join(', ')}` : null;
}

const firstName = (name: string | null | undefined) => name?.trim().split(/\s+/)[0] ?? '';

/** Fills every known placeholder for `ticket`, as `agent` (ctx's actor unless given). */
export async function renderPlaceholders(ctx: Ctx, text: string, ticket: Ticket): Promise<string> {
  const used = new Set(placeholdersIn(text));
  if (!used.size) return text;
  const customer = await UserRecord.findIn(ctx, ticket.requester_id);
  const values: Partial<Record<Placeholder, string>> = {
    'ticket.number': String(ticket.ticket_number),
    'ticket.subject': ticket.subject,
    'customer.name': customer?.name ?? '',
    'customer.first_name': firstName(customer?.name),
    'customer.email': customer?.email ?? '',
    'agent.name': ctx.actor.name,
    'agent.first_name': firstName(ctx.actor.name),
  };
  if (used.has('ticket.status')) values['ticket.status'] = (await Status.findIn(ctx, ticket.status_id))?.name ?? '';
  if (used.has('ticket.priority')) values['ticket.priority'] = (await Priority.findIn(ctx, ticket.priority_id))?.name ?? '';
  if (used.has('organization.name')) {
    values['organization.name'] = ticket.organization_id ? (await OrganizationRecord.findIn(ctx, ticket.organization_id))?.name ?? '' : '';
  }
  return text.replace(PATTERN, (whole, name: string) => values[name as Placeholder] ?? whole);
}
