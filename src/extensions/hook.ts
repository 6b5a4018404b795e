import type { Deps } from '../core/context.js';
import { errors } from '../core/errors.js';
import { sha256Hex } from '../core/crypto.js';
import { Extension } from './models.js';
import { runRaw } from './runtime.js';

/**
 * The inbound vendor hook (SPEC "Inbound extension hook behaviour", nine rules):
 * 1. the token in the path identifies tenant and extension; everything after runs for that tenant;
 * 2. the raw request (method, path, query, headers, body bytes) goes to `webhook_receive` as it came;
 * 3. the plugin verifies the sender itself (with its configured secret); 4. GET is the handshake,
 * answered by the plugin; 5. the plugin chooses status, headers and body (default 200, empty);
 * 6. a plugin failure is logged and answered 200, so the vendor stops retrying; 7. an admin rotates
 * the token (service.ts); 8. the manifest rule is checked at install; 9. deduplication is the plugin's.
 * Calls are limited per extension (HELPDESK_EXTENSION_HOOK_PER_MIN) so one vendor cannot flood the host.
 */
export interface HookRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: Buffer | null;
}

export interface HookAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const windows = new Map<string, { start: number; count: number }>();

function rateLimit(extensionId: string, limit: number, now: Date): void {
  const minute = Math.floor(now.getTime() / 60_000) * 60_000;
  const w = windows.get(extensionId);
  if (!w || w.start !== minute) {
    if (windows.size > 10_000) windows.clear();
    windows.set(extensionId, { start: minute, count: 1 });
    return;
  }
  w.count++;
  if (w.count > limit) throw errors.rateLimited((minute + 60_000 - now.getTime()) / 1000, 'Too many webhook calls for this extension');
}

/** Response headers a plugin may not set: they describe the transport, or are the daemon's own. */
const FORBIDDEN_HEADERS = new Set([
  'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'set-cookie', 'x-request-id',
  'strict-transport-security', 'content-security-policy',
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;

function plainHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

export function answerOf(output: Uint8Array): HookAnswer {
  const ok: HookAnswer = { status: 200, headers: {}, body: Buffer.alloc(0) };
  if (output.length === 0) return ok;
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(output).toString('utf8'));
  } catch {
    throw new Error('webhook_receive answered something other than JSON');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error('webhook_receive answered something other than an object');
  const d = doc as Record<string, unknown>;
  const status = Number.isInteger(d.status) && (d.status as number) >= 200 && (d.status as number) <= 599 ? d.status as number : 200;
  const headers: Record<string, string> = {};
  if (typeof d.headers === 'object' && d.headers !== null) {
    for (const [name, value] of Object.entries(d.headers as Record<string, unknown>)) {
      if (typeof value === 'string' && HEADER_NAME.test(name) && !FORBIDDEN_HEADERS.has(name.toLowerCase()) && !/[\r\n]/.test(value)) headers[name.toLowerCase()] = value;
    }
  }
  let body = Buffer.alloc(0);
  if (typeof d.body_base64 === 'string') body = Buffer.from(d.body_base64, 'base64');
  else if (typeof d.body === 'string') {
    body = Buffer.from(d.body, 'utf8');
    headers['content-type'] ??= 'text/plain; charset=utf-8';
  } else if (d.body !== undefined && d.body !== null) {
    body = Buffer.from(JSON.stringify(d.body), 'utf8');
    headers['content-type'] ??= 'application/json; charset=utf-8';
  }
  if (body.length && !headers['content-type']) headers['content-type'] = 'application/octet-stream';
  return { status, headers, body };
}

export async function receiveHook(deps: Deps, token: string, request: HookRequest, now: Date): Promise<HookAnswer> {
  const found = await deps.db('extensions')
    .where('hook_token_hash', sha256Hex(token))
    .comment('cross-tenant: the hook token decides the tenant')
    .first();
  const row = found ? Extension.fromDatabaseJson(found) : undefined;
  if (!row || !row.enabled || !row.manifest.entrypoints.includes('webhook_receive')) throw errors.notFound('extension hook');
  rateLimit(row.id, deps.config.extensionHookPerMin, now);
  const input = {
    method: request.method, path: request.path, query: request.query, headers: plainHeaders(request.headers),
    body_base64: request.body ? request.body.toString('base64') : '',
  };
  try {
    return answerOf(await runRaw(deps, row, 'webhook_receive', input));
  } catch (error) {
    // Rule 6: the vendor gets 200 and stops retrying; the failure is ours to read in the log.
    deps.log.warn({ extension_id: row.id, tenant_id: row.tenant_id, err: (error as Error).message }, 'extension webhook_receive failed; answered 200');
    return { status: 200, headers: {}, body: Buffer.alloc(0) };
  }
}
