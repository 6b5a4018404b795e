import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { recordAudit } from '../audit/service.js';
import { emitTicketChange } from '../events/emit/ticket-change.js';
import { TeamRecord } from '../directory/models.js';
import { loadVisibleTicket } from '../tickets/visibility.js';
import { ChatRoute, ChatThread, Extension, ThreadNote } from './models.js';
import { loadProvider, runJson } from './runtime.js';
import { ticketSnapshot } from './staff.js';

/**
 * Chat-ops (SPEC "Extensions"): a chat extension (kind `chatops`) binds teams to chat channels
 * (`/integrations/chat/{provider}/routes`), opens a chat thread for a ticket in its team's channel
 * (`open_thread`), and carries the desk's thread notes into that thread (`post_thread_note`).
 * The plugin call and the row it produces are one transaction: a failed call stores nothing.
 */
const OPEN_THREAD_OP = 'open_thread';
const POST_NOTE_OP = 'post_thread_note';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown, max: number): string => (typeof v === 'string' ? v.slice(0, max) : typeof v === 'number' ? String(v) : '');

export interface ChatRouteOut { provider: string; team_id: string; channel_id: string; channel_name: string; created_at: string; updated_at: string }

async function chatProvider(ctx: Ctx, provider: string): Promise<Extension> {
  const ext = await loadProvider(ctx, provider);
  if (ext.kind !== 'chatops') throw errors.notFound('chat extension', provider);
  return ext;
}

function routeOut(ext: Extension, row: ChatRoute): ChatRouteOut {
  return {
    provider: ext.name, team_id: row.team_id, channel_id: row.channel_id, channel_name: row.channel_name,
    created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)!,
  };
}

export async function listChatRoutes(ctx: Ctx, provider: string): Promise<{ data: ChatRouteOut[] }> {
  const ext = await chatProvider(ctx, provider);
  const rows = await ChatRoute.scoped(ctx).where({ extension_id: ext.id }).orderBy('created_at').orderBy('team_id');
  return { data: rows.map((r) => routeOut(ext, r)) };
}

export async function bindChatRoute(ctx: Ctx, provider: string, input: { team_id: string; channel_id: string; channel_name?: string }): Promise<ChatRouteOut> {
  const ext = await chatProvider(ctx, provider);
  const team = await TeamRecord.findIn(ctx, input.team_id);
  if (!team) throw errors.invalid('team_id', 'is not a team of this tenant');
  const before = await ChatRoute.scoped(ctx).where({ extension_id: ext.id, team_id: team.id }).first();
  const [row] = await ctx.trx('chat_routes')
    .insert({
      tenant_id: ctx.tenantId, extension_id: ext.id, team_id: team.id, channel_id: input.channel_id, channel_name: input.channel_name ?? '',
      created_at: ctx.now, updated_at: ctx.now,
    })
    .onConflict(['tenant_id', 'extension_id', 'team_id']).merge(['channel_id', 'channel_name', 'updated_at'])
    .returning('*');
  await recordAudit(ctx, {
    action: 'chatops.route_bound', resourceType: 'extension', resourceId: ext.id,
    changes: { team_id: team.id, channel_id: { from: before?.channel_id ?? null, to: input.channel_id } },
  });
  return routeOut(ext, row as ChatRoute);
}

export interface ChatThreadOut { provider: string; ticket_id: string; channel_id: string; thread_id: string; url: string | null; created_at: string }

async function threadOut(ctx: Ctx, row: ChatThread): Promise<ChatThreadOut> {
  const ext = await Extension.findIn(ctx, row.extension_id);
  return {
    provider: ext?.name ?? '', ticket_id: row.ticket_id, channel_id: row.channel_id, thread_id: row.thread_id, url: row.url,
    created_at: toRfc3339(row.created_at)!,
  };
}

/** The chat extension a thread is opened with: the one named, or the tenant's only enabled chat extension. */
async function pickChatProvider(ctx: Ctx, provider: string | undefined): Promise<Extension> {
  if (provider) return chatProvider(ctx, provider);
  const all = await Extension.scoped(ctx).where({ kind: 'chatops', enabled: true }).limit(2);
  if (all.length === 0) throw errors.conflict('No chat extension is installed and enabled');
  if (all.length > 1) throw errors.invalid('provider', 'is required: more than one chat extension is enabled');
  return all[0]!;
}

export async function openChatThread(ctx: Ctx, ticketId: string, input: { provider?: string }): Promise<ChatThreadOut> {
  const ticket = await loadVisibleTicket(ctx, ticketId);
  const ext = await pickChatProvider(ctx, input.provider);
  if (!ext.manifest.entrypoints.includes(OPEN_THREAD_OP)) throw errors.conflict(`The extension ${ext.name} cannot open chat threads (no ${OPEN_THREAD_OP} entrypoint)`);
  // One thread per ticket; the row lock keeps two agents from opening two.
  await ctx.trx.raw('SELECT 1 FROM tickets WHERE tenant_id = ? AND id = ? FOR UPDATE', [ctx.tenantId, ticket.id]);
  if (await ChatThread.scoped(ctx).where({ ticket_id: ticket.id }).first()) throw errors.conflict('The ticket already has a chat thread');
  if (!ticket.team_id) throw errors.conflict('The ticket has no team, so no chat channel is bound to it');
  const route = await ChatRoute.scoped(ctx).where({ extension_id: ext.id, team_id: ticket.team_id }).first();
  if (!route) throw errors.conflict(`No chat channel of ${ext.name} is bound to the ticket's team`);
  const raw = await runJson(ctx.deps, ext, OPEN_THREAD_OP, {
    ticket: await ticketSnapshot(ctx, ticket), channel_id: route.channel_id, channel_name: route.channel_name,
  });
  const doc = isObject(raw) ? raw : {};
  const threadId = text(doc.thread_id, 500);
  if (!threadId) throw errors.extensionFailed(ext.name, `its ${OPEN_THREAD_OP} answered no thread_id`);
  const url = text(doc.url, 2000) || null;
  const [row] = await ctx.trx('chat_threads').insert({
    tenant_id: ctx.tenantId, ticket_id: ticket.id, extension_id: ext.id, channel_id: route.channel_id, thread_id: threadId, url,
    created_by: ctx.actor.userId, created_at: ctx.now,
  }).returning('*');
  await emitTicketChange(ctx, 'ticket.extension_action', { ticketId: ticket.id, from: `${ext.name}: ${OPEN_THREAD_OP}`, to: `chat thread ${threadId} in ${route.channel_name || route.channel_id}` });
  await recordAudit(ctx, { action: 'chatops.thread_opened', resourceType: 'ticket', resourceId: ticket.id, changes: { extension: ext.name, channel_id: route.channel_id, thread_id: threadId } });
  return threadOut(ctx, row as ChatThread);
}

export interface ThreadNoteOut { id: string; ticket_id: string; body: string; author_id: string | null; author_name: string; external_id: string | null; created_at: string }

function noteOut(row: ThreadNote): ThreadNoteOut {
  return {
    id: row.id, ticket_id: row.ticket_id, body: row.body, author_id: row.author_id, author_name: row.author_name, external_id: row.external_id,
    created_at: toRfc3339(row.created_at)!,
  };
}

export async function listThreadNotes(ctx: Ctx, ticketId: string): Promise<{ data: ThreadNoteOut[] }> {
  const ticket = await loadVisibleTicket(ctx, ticketId);
  const rows = await ThreadNote.scoped(ctx).where({ ticket_id: ticket.id }).orderBy('created_at').orderBy('id').limit(500);
  return { data: rows.map(noteOut) };
}

/** A note into the ticket's chat thread: the extension posts it, then it is stored (both or neither). */
export async function addThreadNote(ctx: Ctx, ticketId: string, body: string): Promise<ThreadNoteOut> {
  const ticket = await loadVisibleTicket(ctx, ticketId);
  const thread = await ChatThread.scoped(ctx).where({ ticket_id: ticket.id }).first();
  if (!thread) throw errors.conflict('The ticket has no chat thread; open one first (POST /tickets/{id}/chat-thread)');
  const ext = await Extension.findIn(ctx, thread.extension_id);
  if (!ext || !ext.enabled) throw errors.conflict('The chat extension of this thread is disabled');
  if (!ext.manifest.entrypoints.includes(POST_NOTE_OP)) throw errors.conflict(`The extension ${ext.name} cannot post thread notes (no ${POST_NOTE_OP} entrypoint)`);
  const raw = await runJson(ctx.deps, ext, POST_NOTE_OP, {
    channel_id: thread.channel_id, thread_id: thread.thread_id, body, author: { id: ctx.actor.userId, name: ctx.actor.name },
    ticket: await ticketSnapshot(ctx, ticket),
  });
  const doc = isObject(raw) ? raw : {};
  const row = await ThreadNote.insertIn(ctx, {
    ticket_id: ticket.id, author_id: ctx.actor.userId, author_name: ctx.actor.name, body, external_id: text(doc.id, 500) || null, created_at: ctx.now,
  });
  await recordAudit(ctx, { action: 'chatops.thread_note', resourceType: 'ticket', resourceId: ticket.id, changes: { extension: ext.name, note_id: row.id, thread_id: thread.thread_id } });
  return noteOut(row);
}
