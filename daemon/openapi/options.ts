import type { SwaggerOptions } from '@fastify/swagger';
import type { RouteDef } from '../route.js';
import { completeDocument } from './document.js';

/**
 * Options of @fastify/swagger: the document's header (licence, contact, server), the bearer
 * scheme, shared schemas named by their `$id`, and the completion of every operation from its
 * route declaration (document.ts).
 */
export function openApiOptions(siteUrl: string, routeDefs: () => readonly RouteDef[]): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Helpdesk API',
        version: '1.0.0',
        description: 'Multi-tenant helpdesk REST API. Conventions, errors, pagination and input rules: docs/api.md.',
        license: { name: 'AGPL-3.0-only', identifier: 'AGPL-3.0-only' },
        contact: { name: 'Helpdesk maintainers', url: `${siteUrl}/api/v1/openapi.json` },
      },
      servers: [{ url: siteUrl, description: 'This installation (HELPDESK_SITE_URL)' }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'A session token (`hds_…`, from POST /auth/login) or an API key (`hdk_…`)',
          },
        },
      },
    },
    // A schema with an `$id` becomes a named component (and a named type in generated clients).
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
    transformObject: (document) => completeDocument((document as { openapiObject: Record<string, unknown> }).openapiObject, routeDefs()),
  } as SwaggerOptions;
}
