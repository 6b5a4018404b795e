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

/** A page route answers text/html; a body it takes comes from an HTML form (JSON is accepted too). */
function describePage(def: RouteDef, operation: Json): void {
  const success = operation.responses?.[String(def.status ?? 200)] ?? {};
  operation.responses = { ...operation.responses, [String(def.status ?? 200)]: { ...success, content: { 'text/html': { schema: { type: 'string' } } } } };
  const body = operation.requestBody?.content;
  if (body?.['application/json']) {
    operation.requestBody.content = { 'application/x-www-form-urlencoded': body['application/json'], ...body };
  }
}

/** A JSON answer with a CSV alternative: `text/csv` beside the JSON, as an attachment. */
function describeCsv(def: RouteDef, operation: Json): void {
  const key = String(def.status ?? 200);
  const success = operation.responses?.[key] ?? {};
  success.content = { ...success.content, 'text/csv': { schema: { type: 'string', description: def.csv } } };
  success.headers = { ...success.headers, 'Content-Disposition': { description: 'attachment; filename=… (CSV only)', schema: { type: 'string' } } };
  operation.responses[key] = success;
}

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

/**
 * A stream route (`stream` in its declaration) answers text/event-stream: the 200 answer says so,
 * gives the schema of each event's `data` (OpenAPI 3.1 has no field for the items of a stream, so
 * it sits inline under `x-event-data`, titled with the schema's name) and shows one event; the
 * request documents the Last-Event-ID header that resumes it.
 */
function describeStream(def: RouteDef, operation: Json): void {
  const stream = def.stream!;
  const { $id: name, ...schema } = JSON.parse(JSON.stringify(stream.data)) as Json;
  operation.responses['200'] = {
    description: stream.description,
    content: {
      'text/event-stream': {
        schema: { type: 'string', description: 'Server-sent events (https://html.spec.whatwg.org/multipage/server-sent-events.html)' },
        example: 'retry: 3000\n\nid: 42\nevent: ticket.status_changed\ndata: {"id":"…","seq":42,"type":"ticket.status_changed",…}\n\n: heartbeat\n\n',
        'x-event-data': { title: name, ...schema },
      },
    },
  };
  operation.parameters = [...(operation.parameters ?? []), {
    name: 'Last-Event-ID',
    in: 'header',
    required: false,
    description: 'Resume after this event id (the `seq` of the last event received); browsers send it when they reconnect',
    schema: { type: 'string', pattern: '^[0-9]{1,18}$', maxLength: 18 },
  }];
}

/** The form of an upload route (RouteDef.multipart): file parts under one name. */
function multipartBody(form: NonNullable<RouteDef['multipart']>, json?: Json): Json {
  const file = { type: 'string', format: 'binary' };
  if (form.parts) {
    // Named parts, alongside the route's JSON body.
    const properties: Json = {};
    for (const part of form.parts) properties[part.name] = part.binary ? { ...file, description: part.description } : { type: 'string', description: part.description };
    return {
      required: true,
      description: form.description,
      content: {
        ...(json?.content ?? {}),
        'multipart/form-data': { schema: { type: 'object', required: form.parts.map((p) => p.name), properties } },
      },
    };
  }
  return {
    required: true,
    description: form.description,
    content: {
      'multipart/form-data': {
        schema: {
          type: 'object',
          required: [form.field],
          properties: { [form.field]: form.maxFiles > 1 ? { type: 'array', maxItems: form.maxFiles, items: file } : file },
        },
      },
    },
  };
}

/** The answers of a download route (RouteDef.binary): the file, and with ranges a part of it. */
function binaryResponses(binary: NonNullable<RouteDef['binary']>): Json {
  const content = { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } };
  const fileHeaders = {
    'Content-Disposition': { description: '`inline` for raster images (audio and video on the stream route), else `attachment`, with the file name', schema: { type: 'string' } },
    'X-Content-Type-Options': { description: 'Always `nosniff`', schema: { type: 'string' } },
    'Accept-Ranges': { description: '`bytes`', schema: { type: 'string' } },
  };
  return {
    200: { description: binary.description, headers: { ...commonHeaders(), ...fileHeaders }, content },
    ...(binary.ranges
      ? {
        206: {
          description: 'The requested byte range (one range of a `Range: bytes=…` header)',
          headers: { ...commonHeaders(), ...fileHeaders, 'Content-Range': { description: '`bytes start-end/size`', schema: { type: 'string' } } },
          content,
        },
      }
      : {}),
  };
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

    if (def.stream) describeStream(def, operation);
    if (def.page) describePage(def, operation);
    hoist(doc, operation.requestBody, def.schema.body);
    if (def.rawBody) operation.requestBody = rawRequestBody(def.rawBody);
    for (const [status, response] of Object.entries(operation.responses as Json)) {
      if (response.description === 'Default Response') response.description = SUCCESS_TEXT[Number(status)] ?? 'Success';
      response.headers = { ...commonHeaders(), ...response.headers };
      hoist(doc, response, def.schema.response?.[Number(status)]);
    }
    if (def.multipart) operation.requestBody = multipartBody(def.multipart, operation.requestBody);
    if (def.binary) Object.assign(operation.responses, binaryResponses(def.binary));
    if (def.csv) describeCsv(def, operation);
    for (const [status, codes] of errorStatusesOf(def)) {
      operation.responses[String(status)] = {
        ...errorResponse(status, codes.map((code) => `\`${code}\``).join(', ')),
        'x-error-codes': codes,
      };
    }
  }
  return doc;
}
