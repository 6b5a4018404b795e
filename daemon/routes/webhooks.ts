import { route } from '../route.js';
import { ListOf, PageQuery } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import {
  createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, rotateSecret, updateEndpoint,
} from '../../src/webhooks/endpoints.js';
import { listDeliveries, retryDelivery, retryEndpointDeliveries } from '../../src/webhooks/deliveries.js';
import { pingEndpoint } from '../../src/webhooks/ping.js';
import {
  BulkRetry, DeliveryListQuery, DeliveryOut, DeliveryParams, PingResult, RetryResult, WebhookEndpointCreate,
  WebhookEndpointOut, WebhookEndpointUpdate,
} from '../../src/webhooks/schemas.js';

/** Outbound webhook endpoints and their deliveries (SPEC "Outbound webhook endpoints"). */
const tags = ['webhooks'];
const read = { kind: 'token', scope: 'webhook_endpoints:read' } as const;
const write = { kind: 'token', scope: 'webhook_endpoints:write' } as const;

export const webhooksRoutes = [
  route({
    method: 'GET', url: '/webhook-endpoints', access: read, summary: 'List webhook endpoints (secrets masked)', tags,
    schema: { querystring: PageQuery, response: { 200: ListOf(WebhookEndpointOut) } },
    handler: (ctx, { query }) => listEndpoints(ctx, query),
  }),
  route({
    method: 'POST', url: '/webhook-endpoints', access: write, feature: 'webhook_endpoints', summary: 'Create a webhook endpoint (the answer carries the full secret, once)', tags,
    errors: ['conflict'],
    schema: { body: WebhookEndpointCreate, response: { 201: WebhookEndpointOut } }, status: 201,
    example: { body: { name: 'Ticket sync', url: 'https://hooks.example.com/helpdesk', events: ['ticket.created', 'ticket.status_changed'], headers: { 'X-Receiver-Token': 'abc123' } } },
    handler: (ctx, { body }) => createEndpoint(ctx, body),
  }),
  route({
    method: 'GET', url: '/webhook-endpoints/:id', access: read, summary: 'A webhook endpoint (secret masked)', tags,
    schema: { params: IdParams, response: { 200: WebhookEndpointOut } },
    handler: (ctx, { params }) => getEndpoint(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/webhook-endpoints/:id', access: write, summary: 'Update the name, URL, events, static headers or active flag', tags,
    schema: { params: IdParams, body: WebhookEndpointUpdate, response: { 200: WebhookEndpointOut } },
    example: { body: { active: false } },
    handler: (ctx, { params, body }) => updateEndpoint(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/webhook-endpoints/:id', access: { kind: 'token', scope: 'webhook_endpoints:delete' }, summary: 'Delete a webhook endpoint and its queued deliveries', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteEndpoint(ctx, params.id),
  }),
  route({
    method: 'POST', url: '/webhook-endpoints/:id/regenerate-secret', access: write, summary: 'Rotate the signing secret (the answer carries the new one, once)', tags,
    schema: { params: IdParams, response: { 200: WebhookEndpointOut } },
    handler: (ctx, { params }) => rotateSecret(ctx, params.id),
  }),
  route({
    method: 'GET', url: '/webhook-endpoints/:id/deliveries', access: read, summary: 'Delivery history, newest first (cursor pagination)', tags,
    schema: { params: IdParams, querystring: DeliveryListQuery, response: { 200: ListOf(DeliveryOut, { cursor: true }) } },
    handler: (ctx, { params, query }) => listDeliveries(ctx, params.id, query),
  }),
  route({
    method: 'POST', url: '/webhook-endpoints/:id/deliveries/retry', access: write, summary: 'Put every failed or dead delivery of the endpoint back to pending', tags,
    operationId: 'webhookEndpoints.deliveries.retryAll',
    schema: { params: IdParams, body: BulkRetry, response: { 200: RetryResult } },
    example: { body: { status: 'dead' } },
    handler: (ctx, { params, body }) => retryEndpointDeliveries(ctx, params.id, body.status),
  }),
  route({
    method: 'POST', url: '/webhook-endpoints/:id/deliveries/:deliveryId/retry', access: write, summary: 'Retry a failed or dead delivery now, with a fresh retry ladder', tags,
    errors: ['conflict'],
    schema: { params: DeliveryParams, response: { 200: DeliveryOut } },
    handler: (ctx, { params }) => retryDelivery(ctx, params.deliveryId, params.id),
  }),
  route({
    method: 'POST', url: '/webhook-deliveries/:id/retry', access: write, summary: 'Retry a failed or dead delivery by its id alone', tags,
    errors: ['conflict'],
    schema: { params: IdParams, response: { 200: DeliveryOut } },
    handler: (ctx, { params }) => retryDelivery(ctx, params.id),
  }),
  route({
    method: 'POST', url: '/webhook-endpoints/:id/test', access: write, summary: 'Send a signed test ping now and report how the receiver answered', tags,
    // The ping waits up to 10 s on the receiver: no transaction held open for it.
    transaction: false,
    schema: { params: IdParams, response: { 200: PingResult } },
    handler: (ctx, { params }) => pingEndpoint(ctx, params.id),
  }),
];

