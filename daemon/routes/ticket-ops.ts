import { STAFF, route } from '../route.js';
import { ListOf, PageQuery } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import { TicketSchema } from '../../src/tickets/schemas.js';
import { cancelSnooze, snoozeTicket } from '../../src/tickets/snooze.js';
import { mergeTicket } from '../../src/tickets/merge.js';
import { addLink, listLinks, removeLink } from '../../src/tickets/links.js';
import { addCollaborator, listCollaborators, removeCollaborator } from '../../src/tickets/collaborators.js';
import { acquireReplyLock, releaseReplyLock } from '../../src/tickets/reply-lock.js';
import { createTimeEntry, deleteTimeEntry, listTimeEntries, updateTimeEntry } from '../../src/tickets/time-entries.js';
import {
  Collaborator, CollaboratorInput, EntryParams, LinkInput, MergeInput, MergeResult, ReplyLock, SnoozeInput,
  TicketCollaboratorParams, TicketLink, TicketLinkParams, TimeEntry, TimeEntryCreate, TimeEntryUpdate,
} from '../../src/tickets/ops-schemas.js';

/**
 * Ticket operations (SPEC "Tickets", "Messages, attachments, collaborators, links, events",
 * "Time entries", "Reply lock"; CONTRACT §5): snooze, merge, links, collaborators, the reply lock
 * and time entries. Staff only, except reading a ticket's collaborators.
 */
const tags = ['tickets'];
const staffWrite = { kind: 'token', scope: 'tickets:write', roles: STAFF } as const;
const EXAMPLE_TICKET = '0190a1b2-0000-7000-8000-000000000002';

export const ticketOpsRoutes = [
  route({
    method: 'POST', url: '/tickets/:id/snooze', access: staffWrite, summary: 'Snooze a ticket until a time; answers the ticket', tags,
    errors: ['conflict'],
    schema: { params: IdParams, body: SnoozeInput, response: { 200: TicketSchema } },
    // A fixed example leaves the allowed window some day: the fuzzer knows `until` as a rule of now.
    example: { body: { until: '2026-12-24T09:00:00Z' } },
    handler: (ctx, { params, body }) => snoozeTicket(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/tickets/:id/snooze', access: staffWrite, summary: 'End a snooze early', tags, status: 204,
    schema: { params: IdParams },
    handler: (ctx, { params }) => cancelSnooze(ctx, params.id),
  }),
  route({
    method: 'POST', url: '/tickets/:id/merge', access: staffWrite, summary: 'Merge a ticket into another one', tags,
    errors: ['conflict'],
    schema: { params: IdParams, body: MergeInput, response: { 200: MergeResult } },
    example: { body: { target_ticket_id: EXAMPLE_TICKET, reason: 'Same printer outage' } },
    handler: (ctx, { params, body }) => mergeTicket(ctx, params.id, body),
  }),

  route({
    method: 'GET', url: '/tickets/:id/links', access: { kind: 'token', scope: 'tickets:read', roles: STAFF }, summary: 'Linked tickets', tags,
    schema: { params: IdParams, querystring: PageQuery, response: { 200: ListOf(TicketLink) } },
    handler: (ctx, { params, query }) => listLinks(ctx, params.id, query),
  }),
  route({
    method: 'POST', url: '/tickets/:id/links', access: staffWrite, summary: 'Link another ticket (both see the link)', tags,
    errors: ['already_exists'], status: 201,
    schema: { params: IdParams, body: LinkInput, response: { 201: TicketLink } },
    example: { body: { target_ticket_id: EXAMPLE_TICKET } },
    handler: (ctx, { params, body }) => addLink(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/tickets/:id/links/:linkId', access: staffWrite, summary: 'Remove a link', tags, status: 204,
    schema: { params: TicketLinkParams },
    handler: (ctx, { params }) => removeLink(ctx, params.id, params.linkId),
  }),

  route({
    method: 'GET', url: '/tickets/:id/collaborators', access: { kind: 'token', scope: 'tickets:read' }, summary: 'CC collaborators of a ticket', tags,
    schema: { params: IdParams, querystring: PageQuery, response: { 200: ListOf(Collaborator) } },
    handler: (ctx, { params, query }) => listCollaborators(ctx, params.id, query),
  }),
  route({
    method: 'POST', url: '/tickets/:id/collaborators', access: staffWrite, summary: 'Add a collaborator: a user, or a bare email address', tags,
    errors: ['already_exists', 'conflict'], status: 201,
    schema: { params: IdParams, body: CollaboratorInput, response: { 201: Collaborator } },
    example: { body: { email: 'cc.someone@example.com', name: 'Someone in CC' } },
    handler: (ctx, { params, body }) => addCollaborator(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/tickets/:id/collaborators/:userId', access: staffWrite, tags, status: 204,
    summary: "Remove a collaborator by user id (a bare email's: by the collaborator id)",
    schema: { params: TicketCollaboratorParams },
    handler: (ctx, { params }) => removeCollaborator(ctx, params.id, params.userId),
  }),

  route({
    method: 'POST', url: '/tickets/:id/reply-lock', access: staffWrite, summary: 'Acquire or extend the reply lock (120 s)', tags, operationId: 'tickets.replyLock.acquire',
    errors: ['reply_locked'],
    schema: { params: IdParams, response: { 200: ReplyLock } },
    handler: (ctx, { params }) => acquireReplyLock(ctx, params.id),
  }),
  route({
    method: 'DELETE', url: '/tickets/:id/reply-lock', access: staffWrite, summary: 'Release the reply lock (holder or admin)', tags, status: 204, operationId: 'tickets.replyLock.release',
    errors: ['reply_locked'],
    schema: { params: IdParams },
    handler: (ctx, { params }) => releaseReplyLock(ctx, params.id),
  }),

  route({
    method: 'GET', url: '/tickets/:id/time-entries', access: { kind: 'token', scope: 'time_entries:read', roles: STAFF }, summary: "A ticket's time entries", tags,
    schema: { params: IdParams, querystring: PageQuery, response: { 200: ListOf(TimeEntry) } },
    handler: (ctx, { params, query }) => listTimeEntries(ctx, params.id, query),
  }),
  route({
    method: 'POST', url: '/tickets/:id/time-entries', access: { kind: 'token', scope: 'time_entries:write', roles: STAFF }, summary: 'Log time on a ticket', tags,
    status: 201,
    schema: { params: IdParams, body: TimeEntryCreate, response: { 201: TimeEntry } },
    example: { body: { minutes: 25, description: 'Reproduced the printer fault', billable: true } },
    handler: (ctx, { params, body }) => createTimeEntry(ctx, params.id, body),
  }),
  route({
    method: 'PATCH', url: '/time-entries/:entryId', access: { kind: 'token', scope: 'time_entries:write', roles: STAFF }, summary: 'Change a time entry (own, or any for admins)', tags,
    errors: ['forbidden'],
    schema: { params: EntryParams, body: TimeEntryUpdate, response: { 200: TimeEntry } },
    example: { body: { minutes: 30 } },
    handler: (ctx, { params, body }) => updateTimeEntry(ctx, params.entryId, body),
  }),
  route({
    method: 'DELETE', url: '/time-entries/:entryId', access: { kind: 'token', scope: 'time_entries:delete', roles: STAFF }, summary: 'Delete a time entry (own, or any for admins)', tags,
    errors: ['forbidden'], status: 204,
    schema: { params: EntryParams },
    handler: (ctx, { params }) => deleteTimeEntry(ctx, params.entryId),
  }),
];
