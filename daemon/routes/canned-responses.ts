import { STAFF, route } from '../route.js';
import { ListOf } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import {
  createCannedResponse, deleteCannedResponse, getCannedResponse, listCannedResponses, renderCannedResponse, updateCannedResponse,
} from '../../src/automation/canned-responses.js';
import {
  CannedResponse, CannedResponseCreate, CannedResponseListQuery, CannedResponseRender, CannedResponseUpdate, RenderedResponse,
} from '../../src/automation/schemas.js';

/** Canned responses with shortcut and placeholders (SPEC "Tags, saved filters, macros, canned responses"). */
const tags = ['canned-responses'];

export const cannedResponsesRoutes = [
  route({
    method: 'GET', url: '/canned-responses', access: { kind: 'token', scope: 'canned_responses:read' }, summary: 'List canned responses (q: shortcut prefix or title)', tags,
    schema: { querystring: CannedResponseListQuery, response: { 200: ListOf(CannedResponse) } },
    handler: (ctx, { query }) => listCannedResponses(ctx, query),
  }),
  route({
    method: 'POST', url: '/canned-responses', access: { kind: 'token', scope: 'canned_responses:write' }, summary: 'Create a canned response', tags,
    errors: ['already_exists'],
    schema: { body: CannedResponseCreate, response: { 201: CannedResponse } }, status: 201,
    example: { body: { title: 'Refund issued', shortcut: 'refund', body: 'Hi {{customer.first_name}}, the refund for ticket #{{ticket.number}} is on its way.' } },
    handler: (ctx, { body }) => createCannedResponse(ctx, body),
  }),
  route({
    method: 'GET', url: '/canned-responses/:id', access: { kind: 'token', scope: 'canned_responses:read' }, summary: 'A canned response', tags,
    schema: { params: IdParams, response: { 200: CannedResponse } },
    handler: (ctx, { params }) => getCannedResponse(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/canned-responses/:id', access: { kind: 'token', scope: 'canned_responses:write' }, summary: 'Update a canned response', tags,
    errors: ['already_exists'],
    schema: { params: IdParams, body: CannedResponseUpdate, response: { 200: CannedResponse } },
    example: { body: { title: 'Refund on its way' } },
    handler: (ctx, { params, body }) => updateCannedResponse(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/canned-responses/:id', access: { kind: 'token', scope: 'canned_responses:delete' }, summary: 'Delete a canned response', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteCannedResponse(ctx, params.id),
  }),
  route({
    method: 'POST', url: '/canned-responses/:id/render', access: { kind: 'token', scope: 'canned_responses:read', roles: STAFF },
    summary: 'Fill the placeholders of a canned response for a ticket', tags, transaction: false,
    schema: { params: IdParams, body: CannedResponseRender, response: { 200: RenderedResponse } },
    example: { body: { ticket_id: '0190a0e0-0000-7000-8000-000000000000' } },
    handler: (ctx, { params, body }) => renderCannedResponse(ctx, params.id, body.ticket_id),
  }),
];
