import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errors, isAppError, type FieldProblem } from '../../src/core/errors.js';

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

function messageOf(error: AjvError): string {
  switch (error.keyword) {
    case 'required': return 'is required';
    case 'additionalProperties': return 'is not allowed';
    case 'format': return `must be a valid ${String(error.params.format).replace('date-time', 'RFC 3339 timestamp')}`;
    case 'enum': return `must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`;
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

function translate(error: FastifyError & { validation?: AjvError[]; validationContext?: string }, request: FastifyRequest): AppError {
  if (isAppError(error)) return error;
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

export function errorsPlugin(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = translate(error, request);
    if (appError.code === 'internal_error') request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, request, appError);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, request, errors.routeNotFound(request.method, request.url)));
}
