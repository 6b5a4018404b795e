import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor, Deps, Role } from '../src/core/context.js';
import { errors, isAppError } from '../src/core/errors.js';
import { inTransaction, readContext } from '../src/db/transaction.js';
import { grants } from '../src/auth/scopes.js';
import { verifyCsrfToken } from '../src/auth/csrf.js';
import { requireFeature } from '../src/licensing/features.js';
import { bearerToken, resolveTenant } from './plugins/identify.js';
import { resolveBearerToken } from '../src/auth/tokens.js';
import type { EventFeed } from '../src/events/feed.js';
import { SseStream } from './sse.js';
import { isUrlSafeOperationId, operationIdOf } from './openapi/operation-id.js';
import { checkNamedSchemas } from './openapi/named-schemas.js';
import { assertBoundedInput } from './input/bounds.js';
import { BinaryReply } from './binary.js';
import type { HandlerInput, RouteDef, RouteSchema } from './route-types.js';

// The route types live in route-types.ts; the routes name them from here.
export type { Access, HandlerInput, MultipartPartDoc, RequestIdentity, RouteDef, RouteSchema, StreamDef } from './route-types.js';

/**
 * "Routes declare, the pipeline enforces": every route states who may call it, the licence
 * feature it needs, its schemas and one service call. The pipeline resolves the tenant, checks
 * credentials, role, scope, CSRF and licence before the body is even parsed, then runs the handler
 * inside a transaction (for writes). A route without an access declaration cannot be registered.
 */

export const STAFF: readonly Role[] = ['admin', 'agent'];
export const ADMIN: readonly Role[] = ['admin'];

export const API_PREFIX = '/api/v1';

/** Media types parsed as raw bytes (daemon/app.ts registers their parser); see RouteDef.rawBody. */
export const RAW_BODY_TYPES = new Set(['message/rfc822']);
/** `rawBody.contentType` of a route that takes a body of any media type as bytes (registered apart: app.ts). */
export const ANY_MEDIA_TYPE = '*/*';

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
