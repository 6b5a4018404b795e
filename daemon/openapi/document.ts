import type { TSchema } from '@sinclair/typebox';
import { API_PREFIX, type RouteDef } from '../route.js';
import { commonHeaders, errorResponse, errorSchemas, responseHeaders } from './components.js';
import { errorStatusesOf } from './error-responses.js';
import { operationIdOf } from './operation-id.js';

/**
 * Completes the document @fastify/swagger generates from the route schemas with what the route
 * declarations imply: operation ids, security, the access rule in words and as extensions, the
 * error answers and the response headers. Nothing here is written per route; a route added later
 * is documented the same way by being declared.
 */
type Json = Record<string, any>;

const SUCCESS_TEXT: Record<number, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No content' };

/** Where a route sits in the document: `/api/v1/users/{id}`. */
export function documentPath(def: RouteDef): string {
  return (def.root ? '' : API_PREFIX) + def.url.replace(/:(\w+)/g, '{$1}');
}

function accessText(def: RouteDef): string {
  const access = def.access;
  const parts: string[] = [];
  switch (access.kind) {
    case 'public':
      parts.push('Access: public, no credentials and no tenant.');
      break;
    case 'tenant':
      parts.push('Access: anonymous; the tenant is named by `X-Helpdesk-Tenant` or the Host.');
      break;
    case 'csrf':
      parts.push('Access: anonymous; the tenant is named by `X-Helpdesk-Tenant` or the Host, and `X-CSRF-Token` must hold a token from `GET /auth/csrf`.');
      break;
    case 'token':
      if (access.roles) parts.push(`Access: a bearer token of a user with the role ${access.roles.join(' or ')}.`);
      if (access.scope) parts.push(`Access: a bearer token holding the scope \`${access.scope}\`.`);
      if (!access.roles && !access.scope) parts.push('Access: a bearer token of any signed-in user.');
      break;
  }
  if (def.feature) parts.push(`Licence: the tenant's licence must include \`${def.feature}\`.`);
  return parts.join(' ');
}

function accessExtensions(def: RouteDef): Json {
  const access = def.access;
  return {
    'x-access': access.kind,
    ...(access.kind === 'token' && access.scope ? { 'x-required-scope': access.scope } : {}),
    ...(access.kind === 'token' && access.roles ? { 'x-roles': [...access.roles] } : {}),
    ...(def.feature ? { 'x-feature': def.feature } : {}),
  };
}

function headerParameters(def: RouteDef): Json[] {
  const kind = def.access.kind;
  if (kind !== 'tenant' && kind !== 'csrf') return [];
  const tenant = {
    name: 'X-Helpdesk-Tenant',
    in: 'header',
    required: false,
    description: 'Slug of the tenant; without it the Host header decides',
    schema: { type: 'string', maxLength: 63 },
  };
  const csrf = {
    name: 'X-CSRF-Token',
    in: 'header',
    required: true,
    description: 'Anti-CSRF token from GET /auth/csrf',
    schema: { type: 'string', maxLength: 500 },
  };
  return kind === 'csrf' ? [tenant, csrf] : [tenant];
}

/** Moves a named (`$id`) top-level schema into components and points at it. */
function hoist(doc: Json, holder: Json | undefined, schema: TSchema | undefined): void {
  const name = schema?.$id;
  const media = holder?.content?.['application/json'];
  if (!name || !media?.schema || media.schema.$ref) return;
  doc.components.schemas[name] ??= media.schema;
  media.schema = { $ref: `#/components/schemas/${name}` };
}

/** The body of a raw-body route (RouteDef.rawBody): bytes of one media type. */
function rawRequestBody(raw: NonNullable<RouteDef['rawBody']>): Json {
  return {
    required: true,
    description: `${raw.description} (at most ${raw.maxBytes} bytes)`,
    content: { [raw.contentType]: { schema: { type: 'string', format: 'binary', maxLength: raw.maxBytes } } },
  };
}

export function completeDocument(doc: Json, defs: readonly RouteDef[]): Json {
  doc.components ??= {};
  doc.components.schemas ??= {};
  for (const [name, schema] of Object.entries(errorSchemas)) {
    if (doc.components.schemas[name]) throw new Error(`A route schema is named ${name}, which the error body uses`);
    doc.components.schemas[name] = schema;
  }
  doc.components.headers = { ...responseHeaders };

  for (const def of defs) {
    const path = documentPath(def);
    const operation: Json | undefined = doc.paths?.[path]?.[def.method.toLowerCase()];
    if (!operation) throw new Error(`${def.method} ${def.url} is missing from the OpenAPI document`);

    operation.operationId = operationIdOf(def);
    operation.security = def.access.kind === 'token' ? [{ bearer: [] }] : [];
    operation.description = [def.description, accessText(def)].filter(Boolean).join('\n\n');
    Object.assign(operation, accessExtensions(def));
    const headers = headerParameters(def);
    if (headers.length) operation.parameters = [...(operation.parameters ?? []), ...headers];

    hoist(doc, operation.requestBody, def.schema.body);
    if (def.rawBody) operation.requestBody = rawRequestBody(def.rawBody);
    for (const [status, response] of Object.entries(operation.responses as Json)) {
      if (response.description === 'Default Response') response.description = SUCCESS_TEXT[Number(status)] ?? 'Success';
      response.headers = { ...commonHeaders(), ...response.headers };
      hoist(doc, response, def.schema.response?.[Number(status)]);
    }
    for (const [status, codes] of errorStatusesOf(def)) {
      operation.responses[String(status)] = {
        ...errorResponse(status, codes.map((code) => `\`${code}\``).join(', ')),
        'x-error-codes': codes,
      };
    }
  }
  return doc;
}
