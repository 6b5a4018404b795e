import { Agent, request } from 'undici';
import { guardedLookup, urlShapeProblem } from '../webhooks/url-guard.js';

/**
 * The HTTP side of the channel adapters: every call goes through the webhooks' SSRF guard (the URL's
 * form now, every resolved address at connection time), has a deadline, follows no redirect, and
 * turns a vendor's refusal into a `VendorError` that says whether a retry may help (429, 5xx,
 * network) and how long the vendor asked to wait (`Retry-After`).
 */
export const VENDOR_TIMEOUT_MS = 10_000;
export const MEDIA_MAX_BYTES = 25 * 1024 * 1024;

export class VendorError extends Error {
  constructor(message: string, readonly status: number | null, readonly retryable: boolean, readonly retryAfterSeconds: number | null = null) {
    super(message);
  }
}

export interface VendorAnswer { status: number; headers: Record<string, string>; body: Buffer }

export interface VendorHttp {
  call(method: 'GET' | 'POST', url: string, options?: { headers?: Record<string, string>; json?: unknown; maxBytes?: number }): Promise<VendorAnswer>;
  json<T = Record<string, unknown>>(method: 'GET' | 'POST', url: string, options?: { headers?: Record<string, string>; json?: unknown }): Promise<T>;
}

const agents = new Map<boolean, Agent>();
function agentFor(allowPrivate: boolean): Agent {
  let agent = agents.get(allowPrivate);
  if (!agent) {
    agent = new Agent({ connect: { timeout: VENDOR_TIMEOUT_MS, lookup: guardedLookup(allowPrivate) as never } });
    agents.set(allowPrivate, agent);
  }
  return agent;
}

function retryAfterOf(value: string | undefined): number | null {
  if (!value) return null;
  const n = Number(value);
  if (Number.isFinite(n) && n >= 0) return Math.min(n, 3600);
  return null;
}

export function vendorHttp(options: { allowPrivate: boolean; timeoutMs?: number }): VendorHttp {
  const timeoutMs = options.timeoutMs ?? VENDOR_TIMEOUT_MS;
  const http: VendorHttp = {
    async call(method, url, opts = {}) {
      const problem = urlShapeProblem(url, options.allowPrivate, 'url');
      if (problem) throw new VendorError(`vendor URL ${problem.message}`, null, false);
      const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
      let body: string | undefined;
      if (opts.json !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(opts.json);
      }
      let res;
      try {
        res = await request(url, {
          method, headers, body, dispatcher: agentFor(options.allowPrivate),
          headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        const e = error as Error & { code?: string };
        throw new VendorError(`${method} ${new URL(url).pathname}: ${e.message}`, null, e.code !== 'EFORBIDDENADDRESS');
      }
      const chunks: Buffer[] = [];
      let size = 0;
      const max = opts.maxBytes ?? 2 * 1024 * 1024;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > max) {
          res.body.destroy();
          throw new VendorError(`${method} ${new URL(url).pathname}: answer over ${max} bytes`, res.statusCode, false);
        }
        chunks.push(chunk as Buffer);
      }
      const flat: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : String(v);
      const answer = { status: res.statusCode, headers: flat, body: Buffer.concat(chunks) };
      if (answer.status < 200 || answer.status >= 300) {
        const detail = answer.body.toString('utf8').slice(0, 300);
        const retryable = answer.status === 429 || answer.status >= 500;
        throw new VendorError(`${method} ${new URL(url).pathname} answered ${answer.status}${detail ? `: ${detail}` : ''}`, answer.status, retryable, retryAfterOf(flat['retry-after']));
      }
      return answer;
    },
    async json(method, url, opts = {}) {
      const answer = await http.call(method, url, opts);
      if (!answer.body.length) return {} as never;
      try {
        return JSON.parse(answer.body.toString('utf8'));
      } catch {
        throw new VendorError(`${method} ${new URL(url).pathname} answered no JSON`, answer.status, false);
      }
    },
  };
  return http;
}
