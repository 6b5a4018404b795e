import { Type } from '@sinclair/typebox';
import { route } from '../route.js';
import { errors } from '../../src/core/errors.js';
import { safeEqual } from '../../src/core/crypto.js';
import { checkReadiness } from '../../src/operations/readiness.js';

/** Liveness, readiness, metrics and the OpenAPI document (CONTRACT §10). */
export const operationsRoutes = [
  route({
    method: 'GET', url: '/healthz', access: { kind: 'public' }, summary: 'Liveness', tags: ['operations'],
    schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
    handler: async () => ({ status: 'ok' as const }),
  }),
  route({
    method: 'GET', url: '/readyz', access: { kind: 'public' }, summary: 'Readiness: database and cache answer', tags: ['operations'],
    errors: ['not_ready'],
    schema: {
      response: {
        200: Type.Object({ status: Type.Literal('ready'), checks: Type.Record(Type.String(), Type.String()) }),
      },
    },
    handler: async (ctx) => ({ status: 'ready' as const, checks: await checkReadiness(ctx.deps) }),
  }),
  route({
    method: 'GET', url: '/metrics', access: { kind: 'public' }, summary: 'Prometheus metrics', tags: ['operations'],
    // HELPDESK_METRICS_TOKEN, when set, guards the endpoint with its own bearer token.
    errors: ['unauthenticated'],
    schema: {},
    handler: async (ctx, { request, reply }) => {
      // Public by default (scrapers sit on a private network); HELPDESK_METRICS_TOKEN guards it.
      const token = ctx.deps.config.metricsToken;
      if (token && !safeEqual(request.headers.authorization ?? '', `Bearer ${token}`)) throw errors.unauthenticated();
      const registry = request.server.metrics;
      reply.type(registry.contentType);
      return registry.metrics();
    },
  }),
  route({
    method: 'GET', url: '/openapi.json', access: { kind: 'public' }, summary: 'OpenAPI 3.1 document', tags: ['operations'], operationId: 'openapi.get',
    schema: {},
    handler: async (_ctx, { request }) => request.server.swagger(),
  }),
];
