import { route } from '../route.js';
import { ListOf } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import {
  ApiKey, ApiKeyCreate, ApiKeyListQuery, createApiKey, CreatedApiKey, listApiKeys, revokeApiKey,
} from '../../src/auth/api-keys.js';

/** Programmatic API keys (CONTRACT §3); issuing one is an Enterprise feature. */
const tags = ['api_keys'];

export const apiKeysRoutes = [
  route({
    method: 'GET', url: '/api-keys', access: { kind: 'token', scope: 'api_keys:read' }, summary: 'List API keys', tags,
    schema: { querystring: ApiKeyListQuery, response: { 200: ListOf(ApiKey) } },
    handler: (ctx, { query }) => listApiKeys(ctx, query),
  }),
  route({
    method: 'POST', url: '/api-keys', access: { kind: 'token', scope: 'api_keys:write' }, feature: 'api_keys', summary: 'Create an API key (shown once)', tags,
    schema: { body: ApiKeyCreate, response: { 201: CreatedApiKey } }, status: 201,
    example: { body: { name: 'Reporting script', scopes: ['tickets:read'] } },
    handler: (ctx, { body }) => createApiKey(ctx, body),
  }),
  route({
    method: 'DELETE', url: '/api-keys/:id', access: { kind: 'token', scope: 'api_keys:delete' }, summary: 'Revoke an API key', tags,
    schema: { params: IdParams }, status: 204,
    handler: async (ctx, { params }) => revokeApiKey(ctx, params.id),
  }),
];
