import { Type } from '@sinclair/typebox';
import { ADMIN, route } from '../route.js';
import { IdParams } from '../../src/core/schema-types.js';
import { listPriorities, listStatuses, updateStatus } from '../../src/vocab/statuses.js';
import { createTicketType, deleteTicketType, getTicketType, listTicketTypes, updateTicketType } from '../../src/vocab/ticket-types.js';
import { createCustomField, deleteCustomField, getCustomField, listCustomFields, updateCustomField } from '../../src/vocab/custom-fields.js';
import {
  CustomFieldCreate, CustomFieldSchema, CustomFieldUpdate, PrioritySchema, StatusSchema, StatusUpdate, TicketTypeCreate,
  TicketTypeSchema, TicketTypeUpdate,
} from '../../src/vocab/schemas.js';

/** The ticket vocabularies (SPEC "Configuration"): statuses, priorities, ticket types, custom fields. */
const tags = ['configuration'];

// Short, unpaginated lists: a tenant has a handful of each.
const DataOf = <T extends Parameters<typeof Type.Array>[0]>(item: T) =>
  Type.Object({ data: Type.Array(item) }, item.$id ? { $id: `${item.$id}Collection` } : {});

export const vocabRoutes = [
  route({
    method: 'GET', url: '/meta/statuses', operationId: 'meta.statuses.list', access: { kind: 'token' }, authenticatedOnly: true, summary: 'The status vocabulary', tags,
    schema: { response: { 200: DataOf(StatusSchema) } },
    handler: (ctx) => listStatuses(ctx),
  }),
  route({
    method: 'PATCH', url: '/meta/statuses/:id', access: { kind: 'token', roles: ADMIN }, summary: 'Rename, reorder or set pauses_sla of a status', tags,
    schema: { params: IdParams, body: StatusUpdate, response: { 200: StatusSchema } },
    example: { body: { pauses_sla: true } },
    handler: (ctx, { params, body }) => updateStatus(ctx, params.id, body),
  }),
  route({
    method: 'GET', url: '/meta/priorities', operationId: 'meta.priorities.list', access: { kind: 'token' }, authenticatedOnly: true, summary: 'The priority vocabulary', tags,
    schema: { response: { 200: DataOf(PrioritySchema) } },
    handler: (ctx) => listPriorities(ctx),
  }),

  route({
    method: 'GET', url: '/ticket-types', operationId: 'ticketTypes.list', access: { kind: 'token', scope: 'ticket_types:read' }, summary: 'List ticket types', tags,
    schema: { response: { 200: DataOf(TicketTypeSchema) } },
    handler: (ctx) => listTicketTypes(ctx),
  }),
  route({
    method: 'POST', url: '/ticket-types', access: { kind: 'token', scope: 'ticket_types:write' }, summary: 'Create a ticket type', tags,
    errors: ['already_exists'],
    schema: { body: TicketTypeCreate, response: { 201: TicketTypeSchema } }, status: 201,
    example: { body: { name: 'Hardware fault', description: 'Devices that stopped working' } },
    handler: (ctx, { body }) => createTicketType(ctx, body),
  }),
  route({
    method: 'GET', url: '/ticket-types/:id', access: { kind: 'token', scope: 'ticket_types:read' }, summary: 'A ticket type', tags,
    schema: { params: IdParams, response: { 200: TicketTypeSchema } },
    handler: (ctx, { params }) => getTicketType(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/ticket-types/:id', access: { kind: 'token', scope: 'ticket_types:write' }, summary: 'Update or retire a ticket type', tags,
    errors: ['already_exists'],
    schema: { params: IdParams, body: TicketTypeUpdate, response: { 200: TicketTypeSchema } },
    example: { body: { active: false } },
    handler: (ctx, { params, body }) => updateTicketType(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/ticket-types/:id', access: { kind: 'token', scope: 'ticket_types:delete' }, summary: 'Delete a ticket type no ticket uses', tags,
    errors: ['conflict'],
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteTicketType(ctx, params.id),
  }),

  route({
    method: 'GET', url: '/custom-fields', operationId: 'customFields.list', access: { kind: 'token', scope: 'custom_fields:read' }, summary: 'List ticket custom fields', tags,
    schema: { response: { 200: DataOf(CustomFieldSchema) } },
    handler: (ctx) => listCustomFields(ctx),
  }),
  route({
    method: 'POST', url: '/custom-fields', access: { kind: 'token', scope: 'custom_fields:write' }, summary: 'Create a ticket custom field', tags,
    errors: ['already_exists'],
    schema: { body: CustomFieldCreate, response: { 201: CustomFieldSchema } }, status: 201,
    example: { body: { key: 'device_serial', label: 'Device serial', kind: 'text' } },
    handler: (ctx, { body }) => createCustomField(ctx, body),
  }),
  route({
    method: 'GET', url: '/custom-fields/:id', access: { kind: 'token', scope: 'custom_fields:read' }, summary: 'A custom field', tags,
    schema: { params: IdParams, response: { 200: CustomFieldSchema } },
    handler: (ctx, { params }) => getCustomField(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/custom-fields/:id', access: { kind: 'token', scope: 'custom_fields:write' }, summary: 'Update or retire a custom field', tags,
    schema: { params: IdParams, body: CustomFieldUpdate, response: { 200: CustomFieldSchema } },
    example: { body: { label: 'Serial number', required: false } },
    handler: (ctx, { params, body }) => updateCustomField(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/custom-fields/:id', access: { kind: 'token', scope: 'custom_fields:delete' }, summary: 'Delete a custom field no ticket has a value for', tags,
    errors: ['conflict'],
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteCustomField(ctx, params.id),
  }),
];
