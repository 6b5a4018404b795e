/**
 * The one error type of the service layer. The daemon turns it into the contract's error body
 * (`{code, message, details, request_id}`); the CLI turns it into a message and an exit code.
 * Every code and status lives in ERROR_TABLE so docs/api.md and the exit-code map have one source.
 */
export const ERROR_TABLE = {
  invalid_json: 400,
  bad_request: 400,
  unauthenticated: 401,
  invalid_credentials: 401,
  invalid_two_factor_code: 401,
  insufficient_scope: 403,
  forbidden: 403,
  csrf_invalid: 403,
  feature_not_licensed: 403,
  resource_not_found: 404,
  tenant_not_found: 404,
  route_not_found: 404,
  conflict: 409,
  already_exists: 409,
  reply_locked: 409,
  meeting_cancelled: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  validation_failed: 422,
  rate_limited: 429,
  internal_error: 500,
  extension_failed: 502,
  not_ready: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_TABLE;

export interface FieldProblem {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: unknown;
  /** Extra response headers (e.g. Retry-After) the daemon should send with this error. */
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, details?: unknown, headers?: Record<string, string>) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_TABLE[code];
    this.details = details;
    this.headers = headers;
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/** Human names for resources in messages: `Ticket 7d1e… does not exist`. */
function label(resource: string): string {
  return resource.charAt(0).toUpperCase() + resource.slice(1).replace(/_/g, ' ');
}

/** The error factory: one function per situation, so messages stay uniform. */
export const errors = {
  notFound: (resource: string, id?: string) =>
    new AppError('resource_not_found', id ? `${label(resource)} ${id} does not exist` : `${label(resource)} does not exist`),
  tenantNotFound: () => new AppError('tenant_not_found', 'No tenant could be resolved for this request'),
  routeNotFound: (method: string, url: string) =>
    new AppError('route_not_found', `No route ${method} ${url.split('?')[0]}`),
  unauthenticated: (message = 'Authentication required: send Authorization: Bearer <token>') =>
    new AppError('unauthenticated', message),
  invalidCredentials: () => new AppError('invalid_credentials', 'Email or password is incorrect'),
  invalidTwoFactorCode: (message = 'The two-factor code or challenge is not valid') =>
    new AppError('invalid_two_factor_code', message),
  insufficientScope: (scope: string) =>
    new AppError('insufficient_scope', `This token lacks the scope ${scope}`, { required_scope: scope }),
  forbidden: (message = 'Your role may not do this') => new AppError('forbidden', message),
  csrfInvalid: () => new AppError('csrf_invalid', 'Missing or invalid X-CSRF-Token header; get one from GET /auth/csrf'),
  featureNotLicensed: (feature: string) =>
    new AppError('feature_not_licensed', `The feature ${feature} is not included in this tenant's licence`, { feature }),
  conflict: (message: string, details?: unknown) => new AppError('conflict', message, details),
  replyLocked: (lockedBy: { id: string; name: string }, expiresAt: string) =>
    new AppError('reply_locked', `${lockedBy.name} is replying to this ticket until ${expiresAt}`, { locked_by: lockedBy, expires_at: expiresAt }),
  meetingCancelled: (id: string) => new AppError('meeting_cancelled', `Meeting ${id} is cancelled; create a new meeting instead`),
  alreadyExists: (resource: string, field: string, value: string) =>
    new AppError('already_exists', `${label(resource)} with ${field} ${value} already exists`, [{ field, message: 'is already taken' }]),
  validation: (problems: FieldProblem[]) =>
    new AppError('validation_failed', problems.map((p) => `${p.field} ${p.message}`).join('; '), problems),
  invalid: (field: string, message: string) => errors.validation([{ field, message }]),
  rateLimited: (retryAfterSeconds: number, message = 'Too many requests') =>
    new AppError('rate_limited', `${message}; retry after ${retryAfterSeconds} s`, undefined, {
      'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
    }),
  payloadTooLarge: (message: string, details?: unknown) => new AppError('payload_too_large', message, details),
  unsupportedMediaType: (message: string) => new AppError('unsupported_media_type', message),
  /** A Range header none of whose ranges lies inside the content (RFC 9110 §15.5.17). */
  rangeNotSatisfiable: (size: number) =>
    new AppError('range_not_satisfiable', `The requested range lies outside the content of ${size} bytes`, undefined, {
      'Content-Range': `bytes */${size}`,
    }),
  notReady: (details?: unknown) => new AppError('not_ready', 'The service is not ready', details),
  internal: () => new AppError('internal_error', 'An internal error occurred'),
  extensionFailed: (name: string, reason: string) =>
    new AppError('extension_failed', `The extension ${name} failed: ${reason}`),
};

/** Exit codes of the CLI, by error class; documented in README. */
export function exitCodeFor(error: unknown): number {
  if (!isAppError(error)) return 1;
  if (error.status === 400 || error.status === 422 || error.status === 413 || error.status === 415 || error.status === 416) return 2;
  if (error.status === 404) return 3;
  if (error.status === 401 || error.status === 403) return 4;
  if (error.status === 409) return 5;
  if (error.status === 429 || error.status === 503) return 6;
  return 1;
}
