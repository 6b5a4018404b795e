/**
 * Stable operation ids for the OpenAPI document, derived from a route's method and URL so that
 * client generators name their methods well without anyone choosing a name:
 *
 *   GET    /users                          users.list     (the answer is a list)
 *   GET    /users/:id                      users.get
 *   GET    /users/seats                    users.seats.get
 *   POST   /users                          users.create   (a collection)
 *   POST   /tickets/:id/messages           tickets.messages.create
 *   POST   /users/:id/invite               users.invite   (an action, not a collection)
 *   POST   /auth/login                     auth.login
 *   PUT    /users/instance-seat-quota      users.instanceSeatQuota.put
 *   PATCH  /users/:id                      users.update
 *   DELETE /api-keys/:id                   apiKeys.delete
 *
 * Path parameters are dropped; static segments become camelCase words joined by dots. A POST ends
 * in `.create` when it adds to a collection (a first segment, or one right after a parameter) and
 * answers 201; any other POST names its last segment as the action. A route whose derived id reads
 * poorly declares `operationId` itself.
 */
import type { TSchema } from '@sinclair/typebox';
import type { RouteDef } from '../route-types.js';

export interface OperationShape {
  method: string;
  /** The route's URL in Fastify form (`/users/:id`) or OpenAPI form (`/users/{id}`). */
  url: string;
  /** Success status; 201 marks a create. */
  status?: number;
  /** The success answer is a list (`{data, meta}`). */
  list?: boolean;
}

interface Segment {
  word: string;
  param: boolean;
}

const isParam = (segment: string) => segment.includes(':') || segment.includes('{');

/** `instance-seat-quota` → `instanceSeatQuota`, `messaging_a` → `messagingA`, `openapi.json` → `openapiJson`. */
export function camelWord(segment: string): string {
  const parts = segment.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return parts
    .map((part, i) => (i === 0 ? part.charAt(0).toLowerCase() + part.slice(1) : part.charAt(0).toUpperCase() + part.slice(1)))
    .join('');
}

function segmentsOf(url: string): Segment[] {
  return url
    .split('/')
    .filter(Boolean)
    .map((segment) => ({ word: isParam(segment) ? '' : camelWord(segment), param: isParam(segment) }))
    .filter((s) => s.param || s.word);
}

export function deriveOperationId(shape: OperationShape): string {
  const segments = segmentsOf(shape.url);
  const words = segments.filter((s) => !s.param).map((s) => s.word);
  if (!words.length) throw new Error(`Cannot derive an operationId from ${shape.method} ${shape.url}: it has no static segment`);
  const last = segments[segments.length - 1]!;
  const method = shape.method.toUpperCase();
  const path = words.join('.');

  switch (method) {
    case 'GET':
      return `${path}.${shape.list ? 'list' : 'get'}`;
    case 'PATCH':
      return `${path}.update`;
    case 'PUT':
      return `${path}.${last.param ? 'replace' : 'put'}`;
    case 'DELETE':
      return `${path}.delete`;
    case 'POST': {
      if (last.param) return `${path}.post`;
      const index = segments.length - 1;
      const collection = index === 0 || segments[index - 1]!.param;
      if (collection && shape.status === 201) return `${path}.create`;
      // The last segment is the action (`auth.login`, `users.invite`); a lone segment needs a verb.
      return words.length > 1 ? path : `${path}.post`;
    }
    default:
      return `${path}.${method.toLowerCase()}`;
  }
}

/** OpenAPI's rule for operation ids that travel in URLs (Redocly: operation-operationId-url-safe). */
export function isUrlSafeOperationId(id: string): boolean {
  return /^[A-Za-z0-9._~-]+$/.test(id);
}

/** A list answer as `ListOf` builds it: `{data: [...], meta: {...}}`. */
export function isListSchema(schema: TSchema | undefined): boolean {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties;
  return Boolean(properties?.data?.type === 'array' && properties.meta);
}

/** Derived ids by route: registering a route compares its id with every route's before it. */
const derived = new WeakMap<RouteDef, string>();

/** The operation id of a declared route: its own `operationId`, else the derived one. */
export function operationIdOf(def: RouteDef): string {
  if (def.operationId) return def.operationId;
  let id = derived.get(def);
  if (id === undefined) {
    const status = def.status ?? 200;
    id = deriveOperationId({ method: def.method, url: def.url, status, list: isListSchema(def.schema.response?.[status]) });
    derived.set(def, id);
  }
  return id;
}
