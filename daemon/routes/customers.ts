import { route, STAFF } from '../route.js';
import { ListOf, PageQuery } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import { listConsent, recordConsent } from '../../src/directory/consent.js';
import { Consent, ConsentPut } from '../../src/directory/schemas.js';

/** Customer consent records (SPEC: GET/PUT /customers/{id}/consent, Staff). */
const tags = ['users'];

export const customersRoutes = [
  route({
    method: 'GET', url: '/customers/:id/consent', access: { kind: 'token', roles: STAFF }, summary: "A customer's consent records, newest first", tags,
    schema: { params: IdParams, querystring: PageQuery, response: { 200: ListOf(Consent) } },
    handler: (ctx, { params, query }) => listConsent(ctx, params.id, query),
  }),
  route({
    method: 'PUT', url: '/customers/:id/consent', access: { kind: 'token', roles: STAFF }, summary: "Record a customer's consent for a channel", tags,
    schema: { params: IdParams, body: ConsentPut, response: { 200: Consent } },
    example: { body: { consent_status: 'opted_in', channel: 'email', notes: 'Asked on the phone' } },
    handler: (ctx, { params, body }) => recordConsent(ctx, params.id, body),
  }),
];
