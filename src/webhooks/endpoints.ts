import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { paginatePage, type Page, type PageInput } from '../core/pagination.js';
import { scoped } from '../db/tenant-scope.js';
import { diff, recordAudit } from '../audit/service.js';
import { WebhookEndpoint } from './models.js';
import { maskSecret, newSecret } from './secret.js';
import { urlProblem } from './url-guard.js';
import type { WebhookEndpointCreate, WebhookEndpointOut, WebhookEndpointUpdate } from './schemas.js';

/**
 * Webhook endpoint management (SPEC "Outbound webhook endpoints"): the secret is generated here,
 * stored encrypted, shown whole only by create and rotate, masked everywhere else. Every change is
 * audited (without the secret).
 */
export const MAX_ENDPOINTS_PER_TENANT = 100;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/** Ours, and those that describe the transport: a static header may not set them. */
const RESERVED_HEADERS = new Set([
  'content-type', 'content-length', 'content-encoding', 'transfer-encoding', 'host', 'connection', 'keep-alive',
  'upgrade', 'te', 'trailer', 'expect', 'user-agent',
]);

function headerProblems(headers: Record<string, string> | undefined): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const name of Object.keys(headers ?? {})) {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) problems.push({ field: `headers.${name.slice(0, 100)}`, message: 'is not a valid header name' });
    else if (RESERVED_HEADERS.has(lower) || lower.startsWith('x-helpdesk-') || lower.startsWith('proxy-')) {
      problems.push({ field: `headers.${name}`, message: 'is set by Helpdesk and cannot be overridden' });
    }
  }
  return problems;
}

export function endpointOut(row: WebhookEndpoint, fullSecret?: string): WebhookEndpointOut {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    events: row.events,
    headers: row.headers ?? {},
    active: row.active,
    secret: fullSecret ?? maskSecret(row.secret_last4),
    created_at: toRfc3339(row.created_at)!,
    updated_at: toRfc3339(row.updated_at)!,
  };
}

async function checkInput(ctx: Ctx, input: { url?: string; headers?: Record<string, string> }): Promise<void> {
  const problems = headerProblems(input.headers);
  if (input.url !== undefined) {
    const problem = await urlProblem(input.url, ctx.deps.config.webhooksAllowPrivate);
    if (problem) problems.unshift(problem);
  }
  if (problems.length) throw errors.validation(problems);
}

export async function loadEndpoint(ctx: Ctx, id: string): Promise<WebhookEndpoint> {
  const row = await WebhookEndpoint.findIn(ctx, id);
  if (!row) throw errors.notFound('webhook_endpoint', id);
  return row;
}

export async function listEndpoints(ctx: Ctx, query: PageInput): Promise<Page<WebhookEndpointOut>> {
  const qb = scoped(ctx, 'webhook_endpoints').orderBy('created_at').orderBy('id');
  return paginatePage<WebhookEndpoint, WebhookEndpointOut>(query, qb, (row) => endpointOut(row));
}

export async function getEndpoint(ctx: Ctx, id: string): Promise<WebhookEndpointOut> {
  return endpointOut(await loadEndpoint(ctx, id));
}

export async function createEndpoint(ctx: Ctx, input: WebhookEndpointCreate): Promise<WebhookEndpointOut> {
  await checkInput(ctx, input);
  const count = await WebhookEndpoint.scoped(ctx).resultSize();
  if (count >= MAX_ENDPOINTS_PER_TENANT) {
    throw errors.conflict(`A tenant may have at most ${MAX_ENDPOINTS_PER_TENANT} webhook endpoints`, { reason: 'endpoint_limit' });
  }
  const secret = newSecret();
  const row = await WebhookEndpoint.insertIn(ctx, {
    name: input.name.trim(),
    url: input.url,
    secret_enc: ctx.deps.box.encrypt(secret),
    secret_last4: secret.slice(-4),
    events: [...new Set(input.events)],
    headers: JSON.stringify(input.headers ?? {}),
    active: input.active ?? true,
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  await recordAudit(ctx, {
    action: 'webhook_endpoint.created', resourceType: 'webhook_endpoint', resourceId: row.id,
    changes: { name: row.name, url: row.url, events: row.events, header_names: Object.keys(input.headers ?? {}), active: row.active },
  });
  return endpointOut(row, secret);
}

export async function updateEndpoint(ctx: Ctx, id: string, input: WebhookEndpointUpdate): Promise<WebhookEndpointOut> {
  const before = await loadEndpoint(ctx, id);
  await checkInput(ctx, input);
  const columns: Record<string, unknown> = { updated_at: ctx.now };
  if (input.name !== undefined) columns.name = input.name.trim();
  if (input.url !== undefined) columns.url = input.url;
  if (input.events !== undefined) columns.events = [...new Set(input.events)];
  if (input.headers !== undefined) columns.headers = JSON.stringify(input.headers);
  if (input.active !== undefined) columns.active = input.active;
  const [row] = await WebhookEndpoint.scoped(ctx).where('id', id).patch(columns as never).returning('*') as unknown as WebhookEndpoint[];
  // Header values may carry credentials of the receiver: the audit names the headers only.
  const changes = diff(
    { ...before, headers: Object.keys(before.headers ?? {}).sort() },
    { ...row!, headers: Object.keys(row!.headers ?? {}).sort() },
    ['name', 'url', 'events', 'headers', 'active'],
  );
  if (Object.keys(changes).length) await recordAudit(ctx, { action: 'webhook_endpoint.updated', resourceType: 'webhook_endpoint', resourceId: id, changes });
  return endpointOut(row!);
}

export async function deleteEndpoint(ctx: Ctx, id: string): Promise<void> {
  const row = await loadEndpoint(ctx, id);
  // Its deliveries go with it (ON DELETE CASCADE): nothing more is sent to a deleted endpoint.
  await WebhookEndpoint.scoped(ctx).where('id', id).delete();
  await recordAudit(ctx, { action: 'webhook_endpoint.deleted', resourceType: 'webhook_endpoint', resourceId: id, changes: { name: row.name, url: row.url } });
}

/** A new secret at once: the next attempt of every queued delivery is signed with it. */
export async function rotateSecret(ctx: Ctx, id: string): Promise<WebhookEndpointOut> {
  await loadEndpoint(ctx, id);
  const secret = newSecret();
  const [row] = await WebhookEndpoint.scoped(ctx).where('id', id)
    .patch({ secret_enc: ctx.deps.box.encrypt(secret), secret_last4: secret.slice(-4), updated_at: ctx.now } as never)
    .returning('*') as unknown as WebhookEndpoint[];
  await recordAudit(ctx, { action: 'webhook_endpoint.secret_rotated', resourceType: 'webhook_endpoint', resourceId: id });
  return endpointOut(row!, secret);
}
