import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { emitTicketCreated } from '../events/emit/ticket-created.js';
import { findUser, findUserByAnyEmail, insertUser, normaliseEmail, type UserRow } from '../directory/user-store.js';
import { recordCustomerEvent } from '../directory/customer-events.js';
import { priorityById, priorityByKey, statusByKey } from '../vocab/lookup.js';
import { checkCustomFieldValues, customFieldsByKey } from '../vocab/custom-field-values.js';
import { Message, Ticket } from './models.js';
import { drawTicketNumber } from './numbering.js';
import { sanitizeBodyHtml } from './sanitize.js';
import { normaliseTags } from './tags.js';
import { isStaffActor } from './visibility.js';
import { findActiveType, findAssignee, findPriority, userName } from './references.js';
import { toRfc3339 } from '../core/clock.js';
import { checkTeamExists, organizationName, teamName } from './directory-links.js';
import { deriveNewTicketColumns, runTicketHooks } from './hooks.js';
import { uuidv7 } from '../core/ids.js';
import { ticketOut } from './output.js';
import type { TicketCreate, TicketOut } from './schemas.js';
import { pinConfigVersion } from '../db/config-cache.js';

/**
 * POST /tickets (CONTRACT §5). Staff open tickets for anyone; a customer only for themselves and
 * without the staff-only fields. The requester is `requester_id`, or `requester {email, name?}`,
 * found by email or created as a customer (`customer.created`). The body becomes the first message,
 * public and authored by the requester: it is what the customer asked, whoever typed it in.
 * Defaults: status `new`, priority `normal`, channel `api`; the organization is the requester's.
 */
const KNOWN_FIELDS = new Set(['subject', 'body', 'body_html', 'requester_id', 'requester', 'type_id', 'priority_id', 'team_id',
  'assigned_agent_id', 'channel', 'tags', 'custom_fields']);
const STAFF_ONLY = ['priority_id', 'team_id', 'assigned_agent_id', 'channel', 'tags'] as const;

/** Custom field values of the body: top-level keys (CONTRACT §4), then `custom_fields`, which wins. */
function customValuesOf(input: TicketCreate): Record<string, unknown> {
  const topLevel = Object.fromEntries(Object.entries(input).filter(([key]) => !KNOWN_FIELDS.has(key)));
  return { ...topLevel, ...(input.custom_fields ?? {}) };
}

async function resolveRequester(ctx: Ctx, input: TicketCreate, problems: FieldProblem[]): Promise<UserRow | null> {
  if (!isStaffActor(ctx)) {
    const self = ctx.actor.userId ? await findUser(ctx, ctx.actor.userId, { pinConfig: true }) : null;
    if (!self) throw errors.forbidden('Only a signed-in customer may open a ticket for themselves');
    if (input.requester_id !== undefined && input.requester_id !== self.id) throw errors.forbidden('Customers may open tickets only for themselves');
    // Any of the customer's own addresses, primary or alternate, names them.
    if (input.requester && normaliseEmail(input.requester.email) !== self.email && (await findUserByAnyEmail(ctx, input.requester.email))?.id !== self.id) {
      throw errors.forbidden('Customers may open tickets only for themselves');
    }
    return self;
  }
  if (input.requester_id !== undefined && input.requester) {
    problems.push({ field: 'requester', message: 'cannot be combined with requester_id' });
    return null;
  }
  if (input.requester_id !== undefined) {
    const user = await findUser(ctx, input.requester_id, { pinConfig: true });
    if (!user) problems.push({ field: 'requester_id', message: 'does not exist' });
    return user;
  }
  if (!input.requester) {
    problems.push({ field: 'requester_id', message: 'is required (or requester with an email)' });
    return null;
  }
  return null; // found or created after validation, so a refused request creates no customer
}

/** Found by any of a user's addresses (an alternate one names the same customer), else created. */
async function findOrCreateCustomer(ctx: Ctx, requester: { email: string; name?: string }): Promise<UserRow> {
  const existing = await findUserByAnyEmail(ctx, requester.email);
  if (existing) return existing;
  const email = normaliseEmail(requester.email);
  const user = await insertUser(ctx, { email, name: requester.name?.trim() || email.split('@')[0]!, role: 'customer' });
  await recordCustomerEvent(ctx, 'customer.created', user);
  return user;
}

export async function createTicket(ctx: Ctx, input: TicketCreate): Promise<TicketOut> {
  const staff = isStaffActor(ctx);
  if (!staff) {
    const refused = STAFF_ONLY.filter((field) => input[field] !== undefined && !(field === 'channel' && input.channel === 'api'));
    if (refused.length) throw errors.forbidden(`Customers may not set ${refused.join(', ')}`);
  }
  const problems: FieldProblem[] = [];
  // A create changes no configuration: its SLA, webhook and mail reads may come from the cache.
  // The requester's read pins the configuration version when it finds them by id; otherwise (a
  // requester by email) a statement of its own does.
  let requester = await resolveRequester(ctx, input, problems);
  await pinConfigVersion(ctx);

  const status = await statusByKey(ctx, 'new');
  const priority = input.priority_id !== undefined
    ? await findPriority(ctx, input.priority_id, 'priority_id', problems)
    : await priorityByKey(ctx, 'normal');
  const type = input.type_id ? await findActiveType(ctx, input.type_id, 'type_id', problems) : null;
  const assignee = input.assigned_agent_id ? await findAssignee(ctx, input.assigned_agent_id, 'assigned_agent_id', problems) : null;
  const customValues = customValuesOf(input);
  const fields = await customFieldsByKey(ctx);
  const checked = checkCustomFieldValues(fields, {}, customValues, true);
  problems.push(...checked.problems);
  if (input.team_id) await checkTeamExists(ctx, input.team_id, problems);
  if (problems.length) throw errors.validation(problems);
  if (!status || !priority) throw new Error(`Tenant ${ctx.tenantId} lacks its default status or priority`);
  requester ??= await findOrCreateCustomer(ctx, input.requester!);

  const row = {
    subject: input.subject.trim(),
    status_id: status.id,
    priority_id: priority.id,
    type_id: type?.id ?? null,
    requester_id: requester.id,
    assigned_agent_id: assignee?.id ?? null,
    team_id: input.team_id ?? null,
    organization_id: requester.organization_id,
    channel: input.channel ?? 'api',
    tags: normaliseTags(input.tags ?? []),
    custom_fields: checked.values,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  // The SLA clock's columns are derived before the insert, so the ticket row is written once.
  const id = uuidv7(ctx.now.getTime());
  const derived = await deriveNewTicketColumns(ctx, { ...row, id });
  const bodyHtml = input.body_html !== undefined ? sanitizeBodyHtml(input.body_html) : null;
  // The first message is written by the ticket's own statement (nothing reads its row back).
  const firstMessage = {
    ticket_id: id,
    body: input.body,
    body_html: bodyHtml,
    is_private: false,
    author_id: requester.id,
    author_name: requester.name,
    is_agent: requester.role !== 'customer',
    channel: row.channel,
    created_at: ctx.now,
  };
  // The number is drawn by the same statement (src/tickets/numbering.ts).
  const ticket = await Ticket.insertIn(ctx, { ...row, ...derived.columns, id, ticket_number: drawTicketNumber(ctx) }, [{ table: Message.tableName, rows: [firstMessage] }]);
  await derived.afterInsert();

  // Hooks first (routing may assign), so that the event carries
  // the ticket as it stands when the create commits.
  const rewritten = await runTicketHooks(ctx, { before: null, after: ticket, changed: new Set([...Object.keys(row), 'ticket_number']) });
  const created = rewritten ? (await Ticket.findIn(ctx, ticket.id))! : ticket;
  await emitTicketCreated(ctx, {
    ticket_id: created.id,
    ticket_number: created.ticket_number,
    subject: created.subject,
    requester_id: requester.id,
    requester_name: requester.name,
    requester_email: requester.email,
    organization_name: await organizationName(ctx, created.organization_id),
    team_id: created.team_id,
    team_name: await teamName(ctx, created.team_id),
    assignee_name: await userName(ctx, created.assigned_agent_id),
    // A hook (routing) may have changed the priority; read it again only then.
    priority: created.priority_id === priority.id ? priority.key : (await priorityById(ctx, created.priority_id))?.key ?? priority.key,
    channel: created.channel,
    sla_due_at: toRfc3339(created.sla_due_at),
    body: input.body,
    body_html: bodyHtml,
  }, { ticket: created, users: [requester] });
  return ticketOut(created);
}
