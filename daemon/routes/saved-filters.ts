import { Type } from '@sinclair/typebox';
import { STAFF, route } from '../route.js';
import { ListOf, PageQuery } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import {
  createSavedFilter, deleteSavedFilter, getSavedFilter, listSavedFilters, savedFilterTickets, updateSavedFilter,
} from '../../src/automation/saved-filters.js';
import { SavedFilter, SavedFilterCreate, SavedFilterUpdate } from '../../src/automation/schemas.js';
import { TicketListQuery, TicketSchema } from '../../src/tickets/schemas.js';

/** Saved filters: each agent's own views of the ticket list (SPEC "Tags, saved filters…"). */
const tags = ['saved-filters'];
const { conditions: _conditions, ...listProperties } = TicketListQuery.properties;
const SavedFilterTicketsQuery = Type.Object(listProperties);

export const savedFiltersRoutes = [
  route({
    method: 'GET', url: '/saved-filters', access: { kind: 'token', roles: STAFF }, summary: "The caller's saved filters", tags,
    schema: { querystring: PageQuery, response: { 200: ListOf(SavedFilter) } },
    handler: (ctx, { query }) => listSavedFilters(ctx, query),
  }),
  route({
    method: 'POST', url: '/saved-filters', access: { kind: 'token', roles: STAFF }, summary: 'Save a filter', tags,
    errors: ['already_exists'],
    schema: { body: SavedFilterCreate, response: { 201: SavedFilter } }, status: 201,
    example: { body: { name: 'Urgent email', conditions: [{ field: 'priority', operator: 'eq', value: 'urgent' }, { field: 'channel', operator: 'eq', value: 'email' }] } },
    handler: (ctx, { body }) => createSavedFilter(ctx, body),
  }),
  route({
    method: 'GET', url: '/saved-filters/:id', access: { kind: 'token', roles: STAFF }, summary: 'A saved filter of the caller', tags,
    schema: { params: IdParams, response: { 200: SavedFilter } },
    handler: (ctx, { params }) => getSavedFilter(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/saved-filters/:id', access: { kind: 'token', roles: STAFF }, summary: 'Update a saved filter', tags,
    errors: ['already_exists'],
    schema: { params: IdParams, body: SavedFilterUpdate, response: { 200: SavedFilter } },
    example: { body: { name: 'Urgent mail' } },
    handler: (ctx, { params, body }) => updateSavedFilter(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/saved-filters/:id', access: { kind: 'token', roles: STAFF }, summary: 'Delete a saved filter', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteSavedFilter(ctx, params.id),
  }),
  route({
    method: 'GET', url: '/saved-filters/:id/tickets', access: { kind: 'token', scope: 'tickets:read', roles: STAFF }, summary: 'The tickets a saved filter selects', tags,
    schema: { params: IdParams, querystring: SavedFilterTicketsQuery, response: { 200: ListOf(TicketSchema, { cursor: true }) } },
    handler: (ctx, { params, query }) => savedFilterTickets(ctx, params.id, query),
  }),
];
