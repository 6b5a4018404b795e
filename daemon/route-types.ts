import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TSchema } from '@sinclair/typebox';
import type { Actor, Ctx, Deps, Role } from '../src/core/context.js';
import type { ErrorCode } from '../src/core/errors.js';
import type { Feature } from '../src/licensing/features.js';
import type { UserRecord } from '../src/directory/models.js';

/**
 * The declarative route types (route.ts registers and enforces them), apart from the pipeline so
 * that the modules the pipeline calls (identify, bounds, the OpenAPI checks) can name them without
 * importing the pipeline back.
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

/**
 * The named parts of a multipart form that a route with a JSON body also takes (`multipart.parts`):
 * the JSON body is then checked against `schema.body` only when the request is JSON, and the
 * handler reads the parts itself. The OpenAPI document shows both forms.
 */
export interface MultipartPartDoc { name: string; binary: boolean; description: string }

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
