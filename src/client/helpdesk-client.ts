import { request } from 'undici';
import { AppError, ERROR_TABLE, type ErrorCode } from '../core/errors.js';

/**
 * A typed REST client for the CLI's remote mode (`--api-url URL --token T`). Error bodies of the
 * API come back as the same AppError (code, message, details) the local service layer would
 * throw, so commands handle both modes alike.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export class HelpdeskClient {
  readonly baseUrl: string;

  /** `baseUrl` is the site URL (`http://host:8080`) or the API base (`…/api/v1`). */
  constructor(baseUrl: string, private readonly token: string) {
    const trimmed = baseUrl.replace(/\/+$/, '');
    this.baseUrl = trimmed.endsWith('/api/v1') ? trimmed : `${trimmed}/api/v1`;
  }

  async request<T = unknown>(method: HttpMethod, path: string, body?: unknown): Promise<T> {
    const url = this.baseUrl + (path.startsWith('/') ? path : `/${path}`);
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response;
    try {
      response = await request(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (error) {
      throw new AppError('not_ready', `Cannot reach the Helpdesk API at ${this.baseUrl}: ${(error as Error).message}`);
    }
    const text = await response.body.text();
    const parsed = text ? safeJson(text) : undefined;
    if (response.statusCode >= 400) throw toAppError(response.statusCode, parsed, text);
    return parsed as T;
  }

  /** A GET whose answer is not JSON (a CSV export): the body as a stream, errors as AppError. */
  async download(path: string): Promise<NodeJS.ReadableStream> {
    const url = this.baseUrl + (path.startsWith('/') ? path : `/${path}`);
    let response;
    try {
      response = await request(url, { method: 'GET', headers: { authorization: `Bearer ${this.token}` } });
    } catch (error) {
      throw new AppError('not_ready', `Cannot reach the Helpdesk API at ${this.baseUrl}: ${(error as Error).message}`);
    }
    if (response.statusCode >= 400) {
      const text = await response.body.text();
      throw toAppError(response.statusCode, text ? safeJson(text) : undefined, text);
    }
    return response.body;
  }

    getLicense<T = Record<string, unknown>>(): Promise<T> {
    return this.request<T>('GET', '/license');
  }

  applyLicense<T = Record<string, unknown>>(text: string): Promise<T> {
    return this.request<T>('POST', '/license', { license: text });
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The contract's error body → AppError; anything else keeps the HTTP status's meaning. */
function toAppError(status: number, body: unknown, text: string): AppError {
  const error = body as { code?: string; message?: string; details?: unknown } | undefined;
  if (error && typeof error.code === 'string' && error.code in ERROR_TABLE) {
    return new AppError(error.code as ErrorCode, error.message ?? error.code, error.details);
  }
  const fallback = (Object.entries(ERROR_TABLE).find(([, s]) => s === status)?.[0] ?? 'internal_error') as ErrorCode;
  return new AppError(fallback, `The API answered ${status}: ${text.slice(0, 200) || '(empty body)'}`);
}
