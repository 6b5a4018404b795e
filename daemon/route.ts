import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TSchema } from '@sinclair/typebox';
import type { Actor, Ctx, Deps, Role } from '../src/core/context.js';
import { errors, isAppError, type ErrorCode } from '../src/core/errors.js';
import { inTransaction, readContext } from '../src/db/transaction.js';
import { grants } from '../src/auth/scopes.js';
import { verifyCsrfToken } from '../src/auth/csrf.js';
import { requireFeature, type Feature } from '../src/licensing/features.js';
import { bearerToken, resolveTenant } from './plugins/identify.js';
import { resolveBearerToken } from '../src/auth/tokens.js';
import type { EventFeed } from '../src/events/feed.js';
import type { UserRecord } from '../src/directory/models.js';
import { SseStream } from './sse.js';
import { isUrlSafeOperationId, operationIdOf } from './openapi/operation-id.js';
import { checkNamedSchemas } from './openapi/named-schemas.js';
import { assertBoundedInput } from './input/bounds.js';
import { BinaryReply } from './binary.js';

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
   * The answer is a server-sent event stream (text/event-stream) instead of a JSON body: the
   * handler returns an EventFeed, which the pipeline sends with heartbeats, a lifetime and
   * backpressure (daemon/sse.ts), re-checking the route's access at every heartbeat. The OpenAPI
   * document describes the stream, the `data` schema of its events and the Last-Event-ID header.
   * GET only.
   */
  stream?: StreamDef;
  /**
   * The body is `multipart/form-data` (uploads) instead of JSON: file parts named `field`, at most
   * `maxFiles`. Only such routes accept multipart (others answer 415); the handler reads the parts
   * with `uploadParts(request)` (multipart.ts). The OpenAPI document shows the form.
   */
  multipart?: { field: string; maxFiles: number; description: string; parts?: MultipartPartDoc[] };
  /**
   * The answer is a file, not JSON: the handler returns a `BinaryReply` (binary.ts) and the document
   * shows `200` (and `206` with `ranges`) as binary content.
   */
  binary?: { description: string; ranges: boolean };
  /**
   * The JSON answer has a CSV alternative (a report's `format=csv`): the handler returns a
   * `BinaryReply` of text/csv for it, and the document adds `text/csv` to the success answer.
   */
  csv?: string;
  /**
   * The answer is an HTML page for people (text/html) rather than JSON: the handler sets the
   * content type and returns the markup. A page route with a body takes an HTML form
   * (application/x-www-form-urlencoded; app.ts registers it with that parser). The document says so.
   */
  page?: boolean;
  /**
   * The body is raw bytes of one media type (the inbound mail route's `message/rfc822`) instead of
   * JSON: the handler gets a Buffer, up to `maxBytes`; other content types answer 415. The
   * OpenAPI document shows it as a binary body. Only such routes accept these types. With
   * `contentType: ANY_MEDIA_TYPE` the route takes any media type; such routes are listed in
   * routes/index.ts `anyBodyRoutes`, which app.ts registers with a catch-all parser of their own.
   */
  rawBody?: { contentType: string; maxBytes: number; description: string };
  handler: (ctx: Ctx, input: HandlerInput<S>) => Promise<unknown>;
}

export interface StreamDef {
  /** The JSON `data` of every event; its `$id` titles it in the document (`x-event-data`). */
  data: TSchema;
  /** What the stream carries: event names, resume, heartbeats; goes into the document. */
  description: string;
}

export const API_PREFIX = '/api/v1';

/** Media types parsed as raw bytes (daemon/app.ts registers their parser); see RouteDef.rawBody. */
export const RAW_BODY_TYPES = new Set(['message/rfc822']);
/** `rawBody.contentType` of a route that takes a body of any media type as bytes (registered apart: app.ts). */
export const ANY_MEDIA_TYPE = '*/*';

/** Identity a request carries once identified (see plugins/identify.ts). */
export interface RequestIdentity {
  /** When the request arrived: the one `now` of everything this request checks and changes. */
  now: Date;
  tenantId: string | null;
  actor: Actor | null;
  /** The bearer token's user row, read in the token lookup (null when anonymous). */
  user: UserRecord | null;
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
async function enforce(def: RouteDef, request: FastifyRequest, deps: Deps, identity = request.identity): Promise<void> {
  const access = def.access;
  if (access.kind === 'public') return;
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

/**
 * Is a long-lived request (a stream) still allowed? Its bearer token is resolved again, at this
 * moment, from the database (not the credential cache: a heartbeat is rare, so the exact answer
 * costs nothing), and the route's access rule enforced on the result: a revoked session, a
 * deactivated or demoted user, or a lapsed licence ends the stream at its next heartbeat.
 */
async function stillAllowed(def: RouteDef, request: FastifyRequest, deps: Deps): Promise<boolean> {
  if (def.access.kind !== 'token') return true;
  const token = bearerToken(request);
  const now = new Date();
  const resolved = token ? await resolveBearerToken(deps.db, token, now) : null;
  if (!resolved || resolved.tenantId !== request.identity.tenantId) return false;
  try {
    await enforce(def, request, deps, { now, tenantId: resolved.tenantId, actor: resolved.actor, user: resolved.user, badToken: false });
    return true;
  } catch (error) {
    if (isAppError(error)) return false;
    throw error;
  }
}

/** Sends a stream route's EventFeed as text/event-stream (daemon/sse.ts). */
function sendStream(def: RouteDef, feed: EventFeed, request: FastifyRequest, reply: FastifyReply) {
  const app = request.server;
  const stream = new SseStream(feed, {
    heartbeatMs: app.deps.config.streamHeartbeatMs,
    lifetimeMs: app.deps.config.streamMaxMs,
    stillAllowed: () => stillAllowed(def, request, app.deps),
    response: reply.raw,
    log: request.log,
  });
  app.openStreams.add(stream);
  stream.once('close', () => app.openStreams.delete(stream));
  // No caching and no proxy buffering: every event goes out as it is written.
  reply.code(200).headers({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  return reply.send(stream);
}

/**
 * The named parts of a multipart form that a route with a JSON body also takes (`multipart.parts`):
 * the JSON body is then checked against `schema.body` only when the request is JSON, and the
 * handler reads the parts itself. The OpenAPI document shows both forms.
 */
export interface MultipartPartDoc { name: string; binary: boolean; description: string }

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
  if (def.stream && def.method !== 'GET') throw new Error(`Route ${def.method} ${def.url}: only a GET route can answer with a stream`);
  checkNamedSchemas(app, `${def.method} ${def.url}`, def.stream ? { ...def.schema, response: { ...def.schema.response, 200: def.stream.data } } : def.schema);
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
    // A route taking JSON or multipart: the body schema holds for JSON only (see the handler).
    ...(def.multipart && def.schema.body ? { attachValidation: true } : {}),
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
      const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      // Multipart bodies are parsed for uploads only; elsewhere they stay what they were: unsupported.
      // A route taking any media type (ANY_MEDIA_TYPE: the extension hook) reads every body as bytes.
      if (def.rawBody?.contentType === ANY_MEDIA_TYPE) return;
      if (!def.multipart && type.startsWith('multipart/')) {
        throw errors.unsupportedMediaType(`Content type ${type} is not supported; send application/json`);
      }
      // Raw bodies only where declared, and only of the declared type.
      const raw = RAW_BODY_TYPES.has(type);
      if (def.rawBody ? type !== def.rawBody.contentType : raw) {
        throw errors.unsupportedMediaType(`Content type ${type || '(none)'} is not supported; send ${def.rawBody?.contentType ?? 'application/json'}`);
      }
    },
    handler: async (request, reply) => {
      if (request.validationError && !request.isMultipart()) throw request.validationError;
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
      if (def.stream) return sendStream(def as unknown as RouteDef, result as EventFeed, request, reply);
      if (result instanceof BinaryReply) return reply.code(result.status).headers(result.headers).send(result.body);
      // A handler that answers a page (not JSON) may set its own status (reply.code); keep it.
      if (reply.raw.statusCode === 200) reply.code(status);
      if (status === 204) return reply.send();
      return reply.send(result);
    },
  });
}

/** Declares a route with its types checked; `registerRoute` installs it. */
export function route<S extends RouteSchema>(def: RouteDef<S>): RouteDef<S> {
  return def;
}
