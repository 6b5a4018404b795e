import { STAFF, route } from '../route.js';
import { ListOf, PageQuery } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import { applyMacro, createMacro, deleteMacro, getMacro, listMacros, updateMacro } from '../../src/automation/macros.js';
import { Macro, MacroApplyParams, MacroCreate, MacroUpdate } from '../../src/automation/schemas.js';
import { TicketSchema } from '../../src/tickets/schemas.js';

/** Macros and applying one to a ticket (SPEC "Tags, saved filters, macros…", CONTRACT §4). */
const tags = ['macros'];

export const macrosRoutes = [
  route({
    method: 'GET', url: '/macros', access: { kind: 'token', scope: 'macros:read' }, summary: 'List macros', tags,
    schema: { querystring: PageQuery, response: { 200: ListOf(Macro) } },
    handler: (ctx, { query }) => listMacros(ctx, query),
  }),
  route({
    method: 'POST', url: '/macros', access: { kind: 'token', scope: 'macros:write' }, summary: 'Create a macro', tags,
    errors: ['already_exists'],
    schema: { body: MacroCreate, response: { 201: Macro } }, status: 201,
    example: { body: { name: 'Close as answered', actions: [{ type: 'post_reply', value: 'Hi {{customer.first_name}}, glad we could help!' }, { type: 'add_tag', value: 'answered' }, { type: 'set_status', value: 'resolved' }] } },
    handler: (ctx, { body }) => createMacro(ctx, body),
  }),
  route({
    method: 'GET', url: '/macros/:id', access: { kind: 'token', scope: 'macros:read' }, summary: 'A macro', tags,
    schema: { params: IdParams, response: { 200: Macro } },
    handler: (ctx, { params }) => getMacro(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/macros/:id', access: { kind: 'token', scope: 'macros:write' }, summary: 'Update a macro', tags,
    errors: ['already_exists'],
    schema: { params: IdParams, body: MacroUpdate, response: { 200: Macro } },
    example: { body: { name: 'Resolve as answered' } },
    handler: (ctx, { params, body }) => updateMacro(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/macros/:id', access: { kind: 'token', scope: 'macros:delete' }, summary: 'Delete a macro', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteMacro(ctx, params.id),
  }),
  route({
    method: 'POST', url: '/tickets/:id/macros/:macroId/apply', access: { kind: 'token', scope: 'tickets:write', roles: STAFF },
    summary: "Apply a macro to a ticket: its replies, then its changes, each with its events", tags, operationId: 'tickets.macros.apply',
    errors: ['conflict'],
    schema: { params: MacroApplyParams, response: { 200: TicketSchema } },
    handler: (ctx, { params }) => applyMacro(ctx, params.id, params.macroId),
  }),
];
