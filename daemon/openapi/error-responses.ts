import { ERROR_TABLE, type ErrorCode } from '../../src/core/errors.js';
import type { RouteDef } from '../route.js';

/**
 * The error answers of a route, derived from its declaration so that nobody has to remember them:
 * what the pipeline itself can refuse (credentials, role, scope, CSRF, tenant, licence, path ids,
 * body parsing, validation, rate limit) plus the codes the route declares in `errors` for what its
 * service refuses (a conflict, a login failure…). The OpenAPI document lists exactly these, and
 * the API fuzzer fails on any answer outside them.
 */

/** Methods whose request body Fastify reads (so it can be malformed, too large or of the wrong type). */
export const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function errorCodesOf(def: RouteDef): ErrorCode[] {
  const codes = new Set<ErrorCode>(['bad_request', 'rate_limited', 'internal_error']);
  const access = def.access;
  if (access.kind === 'token') {
    codes.add('unauthenticated');
    if (access.scope) codes.add('insufficient_scope');
    if (access.roles) codes.add('forbidden');
  } else if (access.kind === 'tenant' || access.kind === 'csrf') {
    codes.add('tenant_not_found');
    if (access.kind === 'csrf') codes.add('csrf_invalid');
  }
  if (def.feature) codes.add('feature_not_licensed');
  // A malformed or unknown id in the path is "not found", never a validation error.
  if (def.schema.params || /[:{]/.test(def.url)) codes.add('resource_not_found');
  if (BODY_METHODS.has(def.method)) {
    codes.add('invalid_json');
    codes.add('payload_too_large');
    codes.add('unsupported_media_type');
  }
  if (def.schema.body || def.schema.querystring) codes.add('validation_failed');
  for (const code of def.errors ?? []) codes.add(code);
  return [...codes];
}

/** The same codes grouped by HTTP status, statuses ascending. */
export function errorStatusesOf(def: RouteDef): Map<number, ErrorCode[]> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(def)) {
    const status = ERROR_TABLE[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}
