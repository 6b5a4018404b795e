import { STAFF, route } from '../route.js';
import { ListOf } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import { createTicket } from '../../src/tickets/create.js';
import { listTickets } from '../../src/tickets/list.js';
import { getTicket, updateTicket } from '../../src/tickets/service.js';
import { TicketCreate, TicketListQuery, TicketSchema, TicketUpdate } from '../../src/tickets/schemas.js';

/** Tickets (SPEC "Tickets", CONTRACT §5). */
const tags = ['tickets'];

export const ticketsRoutes = [
  route({
    method: 'GET', url: '/tickets', access: { kind: 'token', scope: 'tickets:read' }, summary: 'List tickets: filters, conditions, sorts, page or cursor', tags,
    schema: { querystring: TicketListQuery, response: { 200: ListOf(TicketSchema, { cursor: true }) } },
    handler: (ctx, { query }) => listTickets(ctx, query),
  }),
  route({
    method: 'POST', url: '/tickets', access: { kind: 'token', scope: 'tickets:write' }, summary: 'Open a ticket (customers: for themselves)', tags,
    errors: ['forbidden'],
    schema: { body: TicketCreate, response: { 201: TicketSchema } }, status: 201,
    example: { body: { subject: 'Printer on fire', body: 'It started smoking after the update.', requester: { email: 'pat@example.com', name: 'Pat' } } },
    handler: (ctx, { body }) => createTicket(ctx, body as TicketCreate),
  }),
  route({
    method: 'GET', url: '/tickets/:id', access: { kind: 'token', scope: 'tickets:read' }, summary: 'A ticket', tags,
    schema: { params: IdParams, response: { 200: TicketSchema } },
    handler: (ctx, { params }) => getTicket(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/tickets/:id', access: { kind: 'token', scope: 'tickets:write', roles: STAFF }, summary: 'Update a ticket', tags,
    errors: ['conflict'],
    schema: { params: IdParams, body: TicketUpdate, response: { 200: TicketSchema } },
    example: { body: { summary: 'Printer replaced', resolution_code: 'hardware_swap' } },
    handler: (ctx, { params, body }) => updateTicket(ctx, params.id, body),
  }),
];
