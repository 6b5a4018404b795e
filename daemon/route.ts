import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TSchema } from '@sinclair/typebox';
import type { Actor, Ctx, Deps, Role } from '../src/core/context.js';
import { errors, type ErrorCode } from '../src/core/errors.js';
import { inTransaction, readContext } from '../src/db/transaction.js';
import { grants } from '../src/auth/scopes.js';
import { verifyCsrfToken } from '../src/auth/csrf.js';
import { requireFeature, type Feature } from '../src/licensing/features.js';
import { resolveTenant } from './plugins/identify.js';
import { isUrlSafeOperationId, operationIdOf } from './openapi/operation-id.js';
import { checkNamedSchemas } from './openapi/named-schemas.js';
import { assertBoundedInput } from './input/bounds.js';

/**
 * "Routes declare, the pipeline enforces": every route states who may call it, the licence
 * feature it needs, its schemas and one service call. The pipeline resolves the tenant, checks
 * credentials, role, scope, CSRF and licence before the body is even parsed, then runs the handler
 * inside a transaction (for writes). A route without an access declaration cannot be registered.
 */
export type Access =
  /** No tenant, no credentials (health checks, the OpenAPI document). */
  | { kind: 'public' }
  /** A tenant resolved from header or host, no credentials (GET /auth/csrf). */
  | { kind: 'tenant' }
  /** A tenant plus a valid X-CSRF-Token (login, register, password reset). */
  | { kind: 'csrf' }
  /** A bearer token; optionally a role and/or a scope. */
  | { kind: 'token'; scope?: string; roles?: readonly Role[] };

export const STAFF: readonly Role[] = ['admin', 'agent'];
export const ADMIN: readonly Role[] = ['admin'];

export interface RouteSchema {
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  response?: Record<number, TSchema>;
}

type In<S extends RouteSchema, K extends keyof RouteSchema> = S[K] extends TSchema ? Static<S[K]> : undefined;

export interface HandlerInput<S extends RouteSchema> {
  params: In<S, 'params'>;
  query: In<S, 'querystring'>;
  body: In<S, 'body'>;
  request: FastifyRequest;
  reply: FastifyReply;
}

export interface RouteDef<S extends RouteSchema = RouteSchema> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Relative to /api/v1, or absolute from the site root when `root` is true. */
  url: string;
  root?: boolean;
  access: Access;
  feature?: Feature;
  summary: string;
  /** Longer text for the OpenAPI document; the access rule is appended to it by the pipeline. */
  description?: string;
  tags: string[];
  /** The OpenAPI operation id, when the one derived from method and URL reads poorly (operation-id.ts). */
  operationId?: string;
  /**
   * Error codes the route's service can answer beyond those its declaration implies (access,
   * licence, path ids, body and query validation, rate limit: see openapi/error-responses.ts),
   * e.g. `['already_exists']` when a unique value can be taken. The API fuzzer fails on any answer
   * a route does not document.
   */
  errors?: readonly ErrorCode[];
  schema: S;
  /** Success status (default 200). 204 sends no body. */
  status?: number;
  /** Run in a transaction (default: every method but GET). */
  transaction?: boolean;
  /** Examples used by docs and by the route-walking tests: a valid body for this route. */
  example?: { body?: unknown; query?: Record<string, string> };
  /** With `access: {kind: 'token'}` and no scope or roles: any signed-in user may call it. */
  authenticatedOnly?: boolean;
  /**
   * The body is raw bytes of one media type (the inbound mail route's `message/rfc822`) instead of
   * JSON: the handler gets a Buffer, up to `maxBytes`; other content types answer 415. The
   * OpenAPI document shows it as a binary body. Only such routes accept these types.
   */
  rawBody?: { contentType: string; maxBytes: number; description: string };
  handler: (ctx: Ctx, input: HandlerInput<S>) => Promise<unknown>;
}

export const API_PREFIX = '/api/v1';

/** Media types parsed as raw bytes (daemon/app.ts registers their parser); see RouteDef.rawBody. */
export const RAW_BODY_TYPES = new Set(['message/rfc822']);

/** Identity a request carries once identified (see plugins/identify.ts). */
export interface RequestIdentity {
  /** When the request arrived: the one `now` of everything this request checks and changes. */
  now: Date;
  tenantId: string | null;
  actor: Actor | null;
  /** A bearer token was sent but is unknown, expired or revoked. */
  badToken: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    identity: RequestIdentity;
    routeDef?: RouteDef;
  }
  interface FastifyInstance {
    deps: Deps;
    routeDefs: RouteDef[];
  }
}

export const ANONYMOUS: Actor = {
  type: 'system', userId: null, name: 'Anonymous', role: null, apiKeyId: null, sessionId: null, scopes: [],
};

/** The access checks, in the order a caller would fix them: who you are, then what you may do. */
async function enforce(def: RouteDef, request: FastifyRequest, deps: Deps): Promise<void> {
  const access = def.access;
  if (access.kind === 'public') return;
  const identity = request.identity;
  const now = identity.now;

  if (access.kind === 'token') {
    if (!identity.actor || !identity.tenantId) {
      throw errors.unauthenticated(identity.badToken ? 'The bearer token is unknown, expired or revoked' : undefined);
    }
    if (access.roles && !access.roles.includes(identity.actor.role as Role)) {
      throw errors.forbidden(
        access.roles.length === 1 ? `Only ${access.roles[0]}s may do this` : `Only ${access.roles.join(' or ')} users may do this`,
      );
    }
    if (access.scope && !grants(identity.actor.scopes, access.scope)) throw errors.insufficientScope(access.scope);
  } else {
    if (!identity.tenantId) {
      identity.tenantId = (await resolveTenant(request, deps))?.id ?? null;
      if (!identity.tenantId) throw errors.tenantNotFound();
    }
    if (access.kind === 'csrf') {
      const header = request.headers['x-csrf-token'];
      if (!verifyCsrfToken(deps.box, Array.isArray(header) ? header[0] : header, identity.tenantId, now)) {
        throw errors.csrfInvalid();
      }
    }
  }
  if (def.feature) await requireFeature({ trx: deps.db, tenantId: identity.tenantId!, now }, def.feature);
}

/** Registers one declared route on the app. */
export function registerRoute<S extends RouteSchema>(app: FastifyInstance, def: RouteDef<S>): void {
  if (!def.access || !['public', 'tenant', 'csrf', 'token'].includes(def.access.kind)) {
    throw new Error(`Route ${def.method} ${def.url} declares no access rule; every route must`);
  }
  if (def.access.kind === 'token' && !def.access.scope && !def.access.roles && !def.authenticatedOnly) {
    // `{kind: 'token'}` alone means "any signed-in user"; it must be said on purpose.
    throw new Error(`Route ${def.method} ${def.url}: a token route needs a scope, roles, or authenticatedOnly: true`);
  }
  const operationId = operationIdOf(def as unknown as RouteDef);
  if (!isUrlSafeOperationId(operationId)) throw new Error(`Route ${def.method} ${def.url}: operationId ${operationId} is not URL-safe`);
  const twin = app.routeDefs.find((other) => operationIdOf(other) === operationId);
  if (twin) {
    throw new Error(`Route ${def.method} ${def.url}: operationId ${operationId} is already used by ${twin.method} ${twin.url}; declare an operationId`);
  }
  checkNamedSchemas(app, `${def.method} ${def.url}`, def.schema);
  assertBoundedInput(`${def.method} ${def.url}`, def.schema);
  const deps = app.deps;
  const status = def.status ?? 200;
  const useTransaction = def.transaction ?? def.method !== 'GET';
  const url = def.root ? def.url : API_PREFIX + def.url;
  app.routeDefs.push(def as unknown as RouteDef);

  app.route({
    method: def.method,
    url,
    ...(def.rawBody ? { bodyLimit: def.rawBody.maxBytes } : {}),
    schema: {
      summary: def.summary,
      tags: def.tags,
      ...(def.schema.params ? { params: def.schema.params } : {}),
      ...(def.schema.querystring ? { querystring: def.schema.querystring } : {}),
      ...(def.schema.body ? { body: def.schema.body } : {}),
      // A 204 route documents its empty answer without having to say so.
      ...(def.schema.response || status === 204
        ? { response: { ...(status === 204 ? { 204: { type: 'null', description: 'No content' } } : {}), ...def.schema.response } }
        : {}),
    },
    onRequest: async (request) => {
      request.routeDef = def as unknown as RouteDef;
      await enforce(def as unknown as RouteDef, request, deps);
      // Raw bodies only where declared, and only of the declared type.
      const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      const raw = RAW_BODY_TYPES.has(type);
      if (def.rawBody ? type !== def.rawBody.contentType : raw) {
        throw errors.unsupportedMediaType(`Content type ${type || '(none)'} is not supported; send ${def.rawBody?.contentType ?? 'application/json'}`);
      }
    },
    handler: async (request, reply) => {
      const input = {
        params: request.params,
        query: request.query,
        body: request.body,
        request,
        reply,
      } as HandlerInput<S>;
      const ctxInput = {
        tenantId: request.identity.tenantId ?? '',
        actor: request.identity.actor ?? ANONYMOUS,
        now: request.identity.now,
        requestId: String(request.id),
        ip: request.ip,
      };
      const result = useTransaction
        ? await inTransaction(deps, ctxInput, (ctx) => def.handler(ctx, input))
        : await def.handler(readContext(deps, ctxInput), input);
      if (reply.sent) return reply;
      reply.code(status);
      if (status === 204) return reply.send();
      return reply.send(result);
    },
  });
}

/** Declares a route with its types checked; `registerRoute` installs it. */
export function route<S extends RouteSchema>(def: RouteDef<S>): RouteDef<S> {
  return def;
}
