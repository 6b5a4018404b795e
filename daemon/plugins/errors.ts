import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errors, isAppError, type ErrorCode, type FieldProblem } from '../../src/core/errors.js';
import { patternMessage } from '../../src/core/schema-types.js';
import { arrivalIdentity } from './identify.js';
import type { RequestCounter } from './rate-limit.js';

/**
 * Every failure leaves the daemon as the contract's error body (CONTRACT §2):
 * `{code, message, details?, request_id}`. Unknown errors become `internal_error` with nothing of
 * the stack or SQL in the response; they are logged in full instead.
 */
interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

function fieldOf(error: AjvError): string {
  const base = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const child = (error.params.missingProperty ?? error.params.additionalProperty) as string | undefined;
  return [base, child].filter(Boolean).join('.') || '(body)';
}

function typeName(type: unknown): string {
  return String(type)
    .split(',')
    .map((t) => (t === 'null' ? 'null' : `${/^[aeiou]/.test(t) ? 'an' : 'a'} ${t}`))
    .join(' or ');
}

function messageOf(error: AjvError): string {
  const limit = error.params.limit as number;
  switch (error.keyword) {
    case 'required': return 'is required';
    case 'additionalProperties': return 'is not allowed';
    case 'format': return `must be a valid ${String(error.params.format).replace('date-time', 'RFC 3339 timestamp')}`;
    case 'enum': return `must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`;
    case 'type': return `must be ${typeName(error.params.type)}`;
    case 'minLength': return limit === 1 ? 'must not be empty' : `must be at least ${limit} characters`;
    case 'maxLength': return `must be at most ${limit} characters`;
    case 'minimum': return `must be at least ${limit}`;
    case 'maximum': return `must be at most ${limit}`;
    case 'minItems': return `must have at least ${limit} items`;
    case 'maxItems': return `must have at most ${limit} items`;
    case 'pattern': return patternMessage(String(error.params.pattern));
    default: return error.message ?? 'is invalid';
  }
}

/** One item per problem; duplicates (the same field and message from anyOf branches) collapse. */
export function validationProblems(list: AjvError[], context?: string): FieldProblem[] {
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  for (const e of list) {
    const problem = { field: fieldOf(e), message: messageOf(e) };
    if (context === 'querystring' && problem.field === '(body)') problem.field = '(query)';
    const key = `${problem.field}\u0000${problem.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      problems.push(problem);
    }
  }
  return problems;
}

/** The contract's code for a 4xx that Fastify or Node raise themselves (an unusual method, a bad URL…). */
const CLIENT_ERRORS: Record<number, ErrorCode> = {
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'route_not_found',
  405: 'route_not_found',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

function translate(error: FastifyError & { validation?: AjvError[]; validationContext?: string }, request: FastifyRequest): AppError {
  if (isAppError(error)) return error;
  // A request no route answers is "no such route", whatever else is wrong with it (a QUERY request
  // without a content type, a body on an unknown path): the method and path decide first.
  if (request.is404) return errors.routeNotFound(request.method, request.url);
  if (error.validation) {
    if (error.validationContext === 'params') {
      const resource = (request.routeDef?.tags?.[0] ?? 'resource').replace(/s$/, '');
      const value = Object.values((request.params ?? {}) as Record<string, string>).find(Boolean);
      return errors.notFound(resource, value);
    }
    return errors.validation(validationProblems(error.validation, error.validationContext));
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_json', 'The request body is not valid JSON');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'The request body is larger than the server accepts');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', `Content type ${request.headers['content-type'] ?? '(none)'} is not supported; send application/json`);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('bad_request', 'The Content-Length header does not match the body');
  }
  if (error instanceof SyntaxError && (error as { statusCode?: number }).statusCode === 400) {
    return new AppError('invalid_json', 'The request body is not valid JSON');
  }
  // Any other client error Fastify or Node raise keeps its class, never becomes a 500.
  const status = error.statusCode ?? 0;
  if (status >= 400 && status < 500) {
    const code = CLIENT_ERRORS[status] ?? 'bad_request';
    return code === 'route_not_found' ? errors.routeNotFound(request.method, request.url) : new AppError(code, error.message || 'The request is malformed');
  }
  return errors.internal();
}

export function sendError(reply: FastifyReply, request: FastifyRequest, error: AppError): FastifyReply {
  if (error.headers) for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .code(error.status)
    .type('application/json; charset=utf-8')
    .send({
      code: error.code,
      message: error.message,
      ...(error.details !== undefined ? { details: error.details } : {}),
      request_id: String(request.id),
    });
}

/**
 * Requests Fastify's router refuses before any hook runs (a URL whose percent-encoding is broken,
 * a path parameter over the router's length limit) still get the contract's answer: counted by
 * the rate limit, with X-Request-Id, as `400 bad_request`.
 */
export function frameworkErrorHandler(count: RequestCounter) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    reply.header('X-Request-Id', String(request.id));
    request.identity = arrivalIdentity();
    const message = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path segment is longer than any identifier' : 'The URL is not validly percent-encoded';
    count(request, reply).then(
      () => sendError(reply, request, new AppError('bad_request', message)),
      (refusal: unknown) => sendError(reply, request, isAppError(refusal) ? refusal : errors.internal()),
    );
  };
}

export function errorsPlugin(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = translate(error, request);
    if (appError.code === 'internal_error') request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, request, appError);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, request, errors.routeNotFound(request.method, request.url)));
}
