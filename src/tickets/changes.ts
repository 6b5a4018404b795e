import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { recordEvent } from '../events/record.js';
import { Priority, Status, TicketType } from '../vocab/models.js';
import { checkCustomFieldValues, customFieldsByKey } from '../vocab/custom-field-values.js';
import { Ticket } from './models.js';
import { checkTeamExists, teamName } from './directory-links.js';
import { findActiveType, findAssignee, findPriority, findStatus, userName } from './references.js';
import { runTicketHooks } from './hooks.js';
import { normaliseTags } from './tags.js';
import { prepared } from '../db/prepared.js';

/**
 * THE way a ticket changes after creation: PATCH /tickets/{id} now, bulk updates and macros later.
 * One change set is validated as a whole (every problem named at once), applied in one UPDATE,
 * and each change of status, priority, type, assignee or team records its event (SPEC webhook
 * table: `{ticket_id, from, to, actor_id, actor_name}`, from/to as a person reads them, with the
 * ids beside them). Hooks (SLA, routing) run last, in the same transaction.
 */
export interface TicketChangeSet {
  subject?: string;
  status_id?: string;
  priority_id?: string;
  type_id?: string | null;
  assigned_agent_id?: string | null;
  team_id?: string | null;
  summary?: string | null;
  resolution_code?: string | null;
  tags?: string[];
  add_tags?: string[];
  remove_tags?: string[];
  custom_fields?: Record<string, unknown>;
}

type Named = { id: string | null; name: string | null };

interface Transition {
  event: string;
  from: Named;
  to: Named;
}

async function priorityNamed(ctx: Ctx, id: string): Promise<Named> {
  return { id, name: (await Priority.findIn(ctx, id))?.name ?? null };
}

async function typeNamed(ctx: Ctx, id: string | null): Promise<Named> {
  return { id, name: id ? (await TicketType.findIn(ctx, id))?.name ?? null : null };
}

/** Applies `changes` to `ticket` (read FOR UPDATE by the caller) and answers the ticket after. */
export async function applyTicketChanges(ctx: Ctx, ticket: Ticket, changes: TicketChangeSet): Promise<Ticket> {
  const currentStatus = (await Status.findIn(ctx, ticket.status_id))!;
  if (currentStatus.category === 'closed') {
    throw errors.conflict(`Ticket ${ticket.ticket_number} is closed; a closed ticket is final`, { reason: 'ticket_closed' });
  }

  const problems: FieldProblem[] = [];
  const columns: Record<string, unknown> = {};
  const transitions: Transition[] = [];

  let newStatus: Status | undefined;
  if (changes.status_id !== undefined && changes.status_id !== ticket.status_id) {
    newStatus = await findStatus(ctx, changes.status_id, 'status_id', problems);
    if (newStatus) {
      columns.status_id = newStatus.id;
      transitions.push({ event: 'ticket.status_changed', from: { id: currentStatus.id, name: currentStatus.name }, to: { id: newStatus.id, name: newStatus.name } });
    }
  }
  if (changes.priority_id !== undefined && changes.priority_id !== ticket.priority_id) {
    const priority = await findPriority(ctx, changes.priority_id, 'priority_id', problems);
    if (priority) {
      columns.priority_id = priority.id;
      transitions.push({ event: 'ticket.priority_changed', from: await priorityNamed(ctx, ticket.priority_id), to: { id: priority.id, name: priority.name } });
    }
  }
  if (changes.type_id !== undefined && changes.type_id !== ticket.type_id) {
    const type = changes.type_id === null ? null : await findActiveType(ctx, changes.type_id, 'type_id', problems);
    if (type !== undefined) {
      columns.type_id = type?.id ?? null;
      transitions.push({ event: 'ticket.type_changed', from: await typeNamed(ctx, ticket.type_id), to: { id: type?.id ?? null, name: type?.name ?? null } });
    }
  }
  if (changes.assigned_agent_id !== undefined && changes.assigned_agent_id !== ticket.assigned_agent_id) {
    const agent = changes.assigned_agent_id === null ? null : await findAssignee(ctx, changes.assigned_agent_id, 'assigned_agent_id', problems);
    if (agent !== undefined) {
      columns.assigned_agent_id = agent?.id ?? null;
      transitions.push({
        event: 'ticket.assignee_changed',
        from: { id: ticket.assigned_agent_id, name: await userName(ctx, ticket.assigned_agent_id) },
        to: { id: agent?.id ?? null, name: agent?.name ?? null },
      });
    }
  }
  if (changes.team_id !== undefined && changes.team_id !== ticket.team_id
    && (changes.team_id === null || await checkTeamExists(ctx, changes.team_id, problems))) {
    columns.team_id = changes.team_id;
    transitions.push({
      event: 'ticket.team_changed',
      from: { id: ticket.team_id, name: await teamName(ctx, ticket.team_id) },
      to: { id: changes.team_id, name: await teamName(ctx, changes.team_id) },
    });
  }
  if (changes.custom_fields !== undefined) {
    const fields = await customFieldsByKey(ctx, Object.keys(changes.custom_fields));
    const checked = checkCustomFieldValues(fields, ticket.custom_fields ?? {}, changes.custom_fields, false);
    problems.push(...checked.problems);
    if (JSON.stringify(checked.values) !== JSON.stringify(ticket.custom_fields ?? {})) columns.custom_fields = checked.values;
  }
  if (problems.length) throw errors.validation(problems);

  if (changes.subject !== undefined && changes.subject.trim() !== ticket.subject) columns.subject = changes.subject.trim();
  for (const field of ['summary', 'resolution_code'] as const) {
    if (changes[field] !== undefined && changes[field] !== ticket[field]) columns[field] = changes[field];
  }
  if (changes.tags !== undefined || changes.add_tags || changes.remove_tags) {
    const removed = new Set(normaliseTags(changes.remove_tags ?? []));
    const tags = normaliseTags([...(changes.tags ?? ticket.tags ?? []), ...(changes.add_tags ?? [])]).filter((t) => !removed.has(t));
    if (JSON.stringify(tags) !== JSON.stringify(ticket.tags ?? [])) columns.tags = tags;
  }

  // Resolution timestamps follow the status category: entering resolved stamps resolved_at,
  // entering closed stamps closed_at (and resolved_at if it was never resolved); reopening to
  // new/open/pending clears resolved_at, so it always tells when the current resolution happened.
  if (newStatus) {
    if (newStatus.category === 'resolved') columns.resolved_at = ctx.now;
    else if (newStatus.category === 'closed') {
      columns.closed_at = ctx.now;
      if (!ticket.resolved_at) columns.resolved_at = ctx.now;
    } else if (ticket.resolved_at) columns.resolved_at = null;
  }

  const changed = new Set(Object.keys(columns));
  if (!changed.size) return ticket;
  const [after] = await prepared(Ticket.scoped(ctx).where('tickets.id', ticket.id)
    .patch({ ...columns, updated_at: ctx.now } as never).returning('*')) as unknown as Ticket[];

  for (const t of transitions) {
    await recordEvent(ctx, {
      type: t.event,
      subjectType: 'ticket',
      ticketId: ticket.id,
      from: t.from.name ?? t.from.id,
      to: t.to.name ?? t.to.id,
      data: {
        ticket_id: ticket.id,
        ticket_number: Number(ticket.ticket_number),
        from: t.from.name ?? t.from.id,
        to: t.to.name ?? t.to.id,
        from_id: t.from.id,
        to_id: t.to.id,
        actor_id: ctx.actor.userId,
        actor_name: ctx.actor.name,
      },
    });
  }
  const rewritten = await runTicketHooks(ctx, { before: ticket, after: after!, changed });
  return rewritten ? (await Ticket.findIn(ctx, ticket.id))! : after!;
}
