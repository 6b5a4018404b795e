import ipaddr from 'ipaddr.js';
import { Agent, request } from 'undici';
import { guardedLookup, isForbiddenAddress } from './url-guard.js';
import { signBody } from './secret.js';

/**
 * One HTTP attempt of a webhook (CONTRACT §6): POST of the raw body, signed, with the endpoint's
 * static headers under ours; 10 s for the whole attempt; only 2xx counts; redirects are not
 * followed (undici's request follows none unless told to). Connections are kept alive per origin,
 * at most `connectionsPerOrigin` at once, and every new connection passes the SSRF guard.
 */
export const ATTEMPT_TIMEOUT_MS = 10_000;
const MAX_ERROR_LENGTH = 500;
const USER_AGENT = 'Helpdesk-Webhooks/1';

export interface Envelope {
  id: string;
  event: string;
  created_at: string;
  tenant_id: string;
  data: Record<string, unknown>;
}

export interface Attempt {
  url: string;
  secret: string;
  event: string;
  /** The X-Helpdesk-Delivery-Id of this attempt. */
  attemptId: string;
  /** The exact bytes to send (and sign). */
  body: string;
  staticHeaders: Record<string, string>;
}

export interface AttemptResult {
  delivered: boolean;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

/** Our headers win over static ones of the same name, whatever their case. */
export function attemptHeaders(attempt: Attempt): Record<string, string> {
  const ours: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-helpdesk-event': attempt.event,
    'x-helpdesk-delivery-id': attempt.attemptId,
    'x-helpdesk-signature': signBody(attempt.secret, attempt.body),
  };
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(attempt.staticHeaders)) if (!(name.toLowerCase() in ours)) headers[name] = value;
  return { ...headers, ...ours };
}

export function envelopeBody(envelope: Envelope): string {
  return JSON.stringify({ id: envelope.id, event: envelope.event, created_at: envelope.created_at, tenant_id: envelope.tenant_id, data: envelope.data });
}

export interface SenderOptions {
  allowPrivate: boolean;
  timeoutMs?: number;
  connectionsPerOrigin?: number;
}

export class WebhookSender {
  private readonly agent: Agent;
  private readonly allowPrivate: boolean;
  private readonly timeoutMs: number;

  constructor(options: SenderOptions) {
    this.allowPrivate = options.allowPrivate;
    this.timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
    this.agent = new Agent({
      connections: options.connectionsPerOrigin ?? 8,
      keepAliveTimeout: 30_000,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      connect: { timeout: this.timeoutMs, lookup: guardedLookup(options.allowPrivate) as never },
    });
  }

  async send(attempt: Attempt): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const refused = this.refusedLiteral(attempt.url);
    if (refused) return { delivered: false, status_code: null, latency_ms: 0, error: refused };
    try {
      const response = await request(attempt.url, {
        dispatcher: this.agent,
        method: 'POST',
        headers: attemptHeaders(attempt),
        body: attempt.body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      // Only the status matters; drain (bounded) so the connection can be reused.
      await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { delivered: ok, status_code: response.statusCode, latency_ms: elapsed(), error: ok ? null : `HTTP ${response.statusCode}` };
    } catch (error) {
      return { delivered: false, status_code: null, latency_ms: elapsed(), error: describe(error, this.timeoutMs) };
    }
  }

  /** An IP literal never reaches `lookup`, so the guard checks it here. */
  private refusedLiteral(raw: string): string | null {
    if (this.allowPrivate) return null;
    let host: string;
    try {
      host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
    } catch {
      return 'refused: not a valid URL';
    }
    return ipaddr.isValid(host) && isForbiddenAddress(host) ? `refused: ${host} is a non-public address` : null;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

function describe(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code;
  let text: string;
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    text = `timed out after ${timeoutMs / 1000} s`;
  } else if (code === 'EFORBIDDENADDRESS') {
    text = e.message ?? 'refused: non-public address';
  } else {
    text = `${code ? `${code}: ` : ''}${e.message ?? String(error)}`;
  }
  return text.slice(0, MAX_ERROR_LENGTH);
}
