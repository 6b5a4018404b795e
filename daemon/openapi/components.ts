import { ERROR_TABLE } from '../../src/core/errors.js';

/**
 * The document's shared parts: the CONTRACT §2 error body, the problem list of a 422, and the
 * response headers every answer carries. Operations refer to them by `$ref`, so a generated client
 * has one `Error` type for every failure.
 */
const ref = (kind: 'schemas' | 'headers', name: string) => ({ $ref: `#/components/${kind}/${name}` });

export const errorSchemas = {
  Error: {
    type: 'object',
    description: 'The body of every error answer (docs/api.md "Errors").',
    required: ['code', 'message', 'request_id'],
    additionalProperties: false,
    properties: {
      code: { type: 'string', enum: Object.keys(ERROR_TABLE), description: 'Machine-readable error code; its HTTP status is fixed' },
      message: { type: 'string', description: 'Human-readable explanation' },
      details: { description: 'Structured details when there are any: a list of field problems for 422, an object otherwise (e.g. `required_scope`, `feature`, `reason`)' },
      request_id: { type: 'string', description: 'The X-Request-Id of the request, also in the server log' },
    },
  },
  FieldProblem: {
    type: 'object',
    required: ['field', 'message'],
    additionalProperties: false,
    properties: {
      field: { type: 'string', description: 'Dotted path of the field (`custom_fields.plan`, `scopes.0`)' },
      message: { type: 'string', description: 'What is wrong with it (`is required`, `must be at most 100`)' },
    },
  },
  ValidationError: {
    description: 'A 422 answer: the error body whose `details` lists one problem per field.',
    allOf: [
      ref('schemas', 'Error'),
      {
        type: 'object',
        required: ['details'],
        properties: { details: { type: 'array', items: ref('schemas', 'FieldProblem') } },
      },
    ],
  },
};

export const responseHeaders = {
  'X-Request-Id': {
    description: 'The request id: echoed when the client sent a sane one, else generated',
    schema: { type: 'string' },
  },
  'X-RateLimit-Limit': { description: 'Requests allowed per one-minute window', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'End of the current window, in epoch seconds', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer' } },
};

/** Headers on every answer. */
export function commonHeaders(): Record<string, { $ref: string }> {
  return Object.fromEntries(
    ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'].map((name) => [name, ref('headers', name)]),
  );
}

export function errorResponse(status: number, description: string): Record<string, unknown> {
  return {
    description,
    headers: { ...commonHeaders(), ...(status === 429 ? { 'Retry-After': ref('headers', 'Retry-After') } : {}) },
    content: { 'application/json': { schema: ref('schemas', status === 422 ? 'ValidationError' : 'Error') } },
  };
}
