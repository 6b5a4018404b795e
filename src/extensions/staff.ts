import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { recordAudit } from '../audit/service.js';
import { emitTicketChange } from '../events/emit/ticket-change.js';
import { EventRecord } from '../events/models.js';
import { loadVisibleTicket } from '../tickets/visibility.js';
import type { Ticket } from '../tickets/models.js';
import { ExtensionLink, type Extension } from './models.js';
import { loadProvider, runJson } from './runtime.js';
import type { ActionIn, ContextBlock } from './schemas.js';

/**
 * What staff do with an extension on a ticket (SPEC "Extensions", "Operation hooks for task-tracker
 * plugins"): read the context panel, run an action (audited, `ticket.extension_action`), link and
 * unlink an external record, run the create op (the service records the link itself), run read ops.
 */
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown, max = 2000): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v)).slice(0, max);

/** The ticket as plugins see it: the `ticket.created` snapshot, with today's subject. */
export async function ticketSnapshot(ctx: Ctx, ticket: Ticket): Promise<Record<string, unknown>> {
  const created = await EventRecord.scoped(ctx).where({ ticket_id: ticket.id, type: 'ticket.created' }).first();
  return { ...(created?.data ?? {}), ticket_id: ticket.id, ticket_number: ticket.ticket_number, subject: ticket.subject };
}

async function linkOf(ctx: Ctx, ticketId: string, ext: Extension): Promise<ExtensionLink | undefined> {
  return ExtensionLink.scoped(ctx).where({ ticket_id: ticketId, extension_id: ext.id }).first();
}

async function staffTicket(ctx: Ctx, id: string): Promise<Ticket> {
  return loadVisibleTicket(ctx, id);
}

export function contextBlock(provider: string, externalId: string | null, raw: unknown): ContextBlock {
  const doc = isObject(raw) ? raw : {};
  const list = (v: unknown) => (Array.isArray(v) ? v.filter(isObject).slice(0, 100) : []);
  return {
    provider,
    external_id: externalId,
    title: str(doc.title, 500) || provider,
    fields: list(doc.fields).map((f) => ({ label: str(f.label, 200), value: str(f.value), ...(typeof f.url === 'string' ? { url: str(f.url) } : {}) })),
    actions: list(doc.actions).map((a) => ({
      id: str(a.id, 200), label: str(a.label, 200), kind: a.kind === 'run_op' ? 'run_op' : 'open_url',
      ...(typeof a.url === 'string' ? { url: str(a.url) } : {}), ...(typeof a.op === 'string' ? { op: str(a.op, 64) } : {}),
      ...(Array.isArray(a.inputs) ? { inputs: a.inputs.slice(0, 20) } : {}),
    })),
    checklist: list(doc.checklist).map((c) => ({ id: str(c.id, 200), name: str(c.name, 500), completed: c.completed === true })),
  };
}

export async function extensionContext(ctx: Ctx, ticketId: string, provider: string): Promise<ContextBlock> {
  const ticket = await staffTicket(ctx, ticketId);
  const ext = await loadProvider(ctx, provider);
  if (!ext.manifest.entrypoints.includes('fetch_context')) throw errors.notFound('extension operation', 'fetch_context');
  const link = await linkOf(ctx, ticket.id, ext);
  const raw = await runJson(ctx.deps, ext, 'fetch_context', { ticket: await ticketSnapshot(ctx, ticket), link: link?.external_id ?? null });
  return contextBlock(ext.name, link?.external_id ?? null, raw);
}

function summary(result: unknown): string {
  if (isObject(result)) {
    for (const key of ['summary', 'message', 'status']) if (typeof result[key] === 'string') return str(result[key], 500);
  }
  return 'done';
}

export async function runAction(ctx: Ctx, ticketId: string, provider: string, input: ActionIn): Promise<{ op: string; result: unknown }> {
  const ticket = await staffTicket(ctx, ticketId);
  const ext = await loadProvider(ctx, provider);
  const m = ext.manifest;
  // Ops the service calls itself (lifecycle, file requests, chat threads) are not panel actions.
  const reserved = ['fetch_context', 'webhook_receive', 'create_file_request', 'open_thread', 'post_thread_note', m.link_op, m.unlink_op, m.create_op].filter(Boolean);
  if (!m.entrypoints.includes(input.op) || reserved.includes(input.op) || m.read_ops.includes(input.op)) {
    throw errors.invalid('op', `is not an action of the extension ${provider}`);
  }
  const link = await linkOf(ctx, ticket.id, ext);
  const result = await runJson(ctx.deps, ext, input.op, { params: input.params ?? {}, ticket: await ticketSnapshot(ctx, ticket), link: link?.external_id ?? null });
  const to = summary(result);
  await emitTicketChange(ctx, 'ticket.extension_action', { ticketId: ticket.id, from: `${ext.name}: ${input.op}`, to });
  await recordAudit(ctx, {
    action: 'extension.action', resourceType: 'ticket', resourceId: ticket.id,
    changes: { extension: ext.name, op: input.op, param_keys: Object.keys(input.params ?? {}).sort(), summary: to },
  });
  return { op: input.op, result };
}

function linkOut(ext: Extension, link: ExtensionLink) {
  return { provider: ext.name, ticket_id: link.ticket_id, external_id: link.external_id, created_at: toRfc3339(link.created_at)! };
}

async function storeLink(ctx: Ctx, ticket: Ticket, ext: Extension, externalId: string): Promise<ExtensionLink> {
  const [row] = await ctx.trx('extension_links')
    .insert({ tenant_id: ctx.tenantId, ticket_id: ticket.id, extension_id: ext.id, external_id: externalId, created_at: ctx.now })
    .onConflict(['tenant_id', 'ticket_id', 'extension_id']).merge(['external_id', 'created_at'])
    .returning('*');
  return row as ExtensionLink;
}

export async function linkTicket(ctx: Ctx, ticketId: string, provider: string, externalId: string) {
  const ticket = await staffTicket(ctx, ticketId);
  const ext = await loadProvider(ctx, provider);
  const snapshot = await ticketSnapshot(ctx, ticket);
  if (ext.manifest.link_op) await runJson(ctx.deps, ext, ext.manifest.link_op, { external_id: externalId, ticket: snapshot });
  const link = await storeLink(ctx, ticket, ext, externalId);
  await recordAudit(ctx, { action: 'extension.linked', resourceType: 'ticket', resourceId: ticket.id, changes: { extension: ext.name, external_id: externalId } });
  return linkOut(ext, link);
}

export async function unlinkTicket(ctx: Ctx, ticketId: string, provider: string): Promise<void> {
  const ticket = await staffTicket(ctx, ticketId);
  const ext = await loadProvider(ctx, provider);
  const link = await linkOf(ctx, ticket.id, ext);
  if (!link) throw errors.notFound('extension link', `${provider} on ticket ${ticket.id}`);
  if (ext.manifest.unlink_op) await runJson(ctx.deps, ext, ext.manifest.unlink_op, { external_id: link.external_id, ticket: await ticketSnapshot(ctx, ticket) });
  await ExtensionLink.scoped(ctx).where({ ticket_id: ticket.id, extension_id: ext.id }).delete();
  await recordAudit(ctx, { action: 'extension.unlinked', resourceType: 'ticket', resourceId: ticket.id, changes: { extension: ext.name, external_id: link.external_id } });
}

export interface CreateResult { key: string; title: string; status: string; assignee: string; priority: string; url: string }

export async function createExternal(ctx: Ctx, ticketId: string, provider: string, values: Record<string, unknown>): Promise<CreateResult> {
  const ticket = await staffTicket(ctx, ticketId);
  const ext = await loadProvider(ctx, provider);
  if (!ext.manifest.create_op) throw errors.notFound('extension operation', 'create_op');
  const raw = await runJson(ctx.deps, ext, ext.manifest.create_op, { values, ticket: await ticketSnapshot(ctx, ticket) });
  const doc = isObject(raw) ? raw : {};
  const result: CreateResult = {
    key: str(doc.key, 500), title: str(doc.title, 500), status: str(doc.status, 200), assignee: str(doc.assignee, 200),
    priority: str(doc.priority, 200), url: str(doc.url),
  };
  if (!result.key) throw errors.extensionFailed(ext.name, 'the create op answered no key');
  await storeLink(ctx, ticket, ext, result.key);
  await emitTicketChange(ctx, 'ticket.extension_action', { ticketId: ticket.id, from: `${ext.name}: ${ext.manifest.create_op}`, to: `created ${result.key}` });
  await recordAudit(ctx, { action: 'extension.created', resourceType: 'ticket', resourceId: ticket.id, changes: { extension: ext.name, external_id: result.key } });
  return result;
}

export async function runReadOp(ctx: Ctx, provider: string, op: string, query: Record<string, string>): Promise<unknown> {
  const ext = await loadProvider(ctx, provider);
  if (!ext.manifest.read_ops.includes(op)) throw errors.notFound('extension read op', op);
  return runJson(ctx.deps, ext, op, query);
}
