import type { FastifyRequest } from 'fastify';
import type { Ctx } from '../core/context.js';
import { AppError, errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { randomToken, uuidv7 } from '../core/ids.js';
import { safeEqual, sha256Hex } from '../core/crypto.js';
import { scoped } from '../db/tenant-scope.js';
import type { EventFeed } from '../events/feed.js';
import { conversationMessages, emitChatEvent, openVisitorStream, type ResumePoint } from './events.js';
import { openConversation, visitorSays } from './conversations.js';
import type { ConversationRow, VisitorRow } from './conversation-rows.js';
import { originAllowed, widgetById, type WidgetRow } from './widgets.js';
import { presenceCutoff } from './offering.js';
import type { ChatMessage, VisitorStart } from './schemas.js';

/**
 * The visitor side (CONTRACT §16, public): a page's widget starts a conversation from an allowed
 * `Origin` and gets a visitor token (`hdv_…`, 256 bits, stored only as its SHA-256 hash and
 * compared in constant time); the token then names the tenant, the visitor and their conversation.
 * A blocked visitor is refused (`403`). Visitors are rate-limited per visitor: VISITOR_MESSAGES_PER_MINUTE
 * messages in a fixed one-minute window, counted in the database so every daemon shares it.
 */
export const VISITOR_TOKEN_PREFIX = 'hdv_';
export const VISITOR_MESSAGES_PER_MINUTE = 20;

export interface VisitorSession {
  ctx: Ctx;
  visitor: VisitorRow;
  widget: WidgetRow;
  conversation: ConversationRow;
}

function headerOf(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function originRefused(): AppError {
  return errors.forbidden('This origin may not use this chat widget');
}

async function isBlocked(ctx: Ctx, visitorId: string): Promise<boolean> {
  return Boolean(await scoped(ctx, 'webchat_blocks').where('visitor_id', visitorId).first('id'));
}

function visitorOut(visitor: VisitorRow, conversationId: string | null) {
  return { id: visitor.id, name: visitor.name, email: visitor.email, last_seen_at: toRfc3339(visitor.last_seen_at)!, conversation_id: conversationId };
}

/** Marks the visitor seen now; announces `visitor.online` when they were offline. */
async function touch(ctx: Ctx, visitor: VisitorRow, conversationId: string | null): Promise<void> {
  const wasOnline = visitor.online && visitor.last_seen_at > presenceCutoff(ctx.now);
  await scoped(ctx, 'webchat_visitors').where('id', visitor.id).update({ online: true, last_seen_at: ctx.now });
  visitor.online = true;
  visitor.last_seen_at = ctx.now;
  if (!wasOnline) await emitChatEvent(ctx, 'staff', 'visitor.online', conversationId, visitorOut(visitor, conversationId));
}

/** POST /webchat/widgets/{id}/conversations: a new visitor and their conversation. */
export async function startConversation(publicCtx: Ctx, widgetId: string, request: FastifyRequest, input: VisitorStart) {
  const widget = await widgetById(publicCtx, widgetId);
  if (!widget) throw errors.notFound('webchat widget', widgetId);
  if (!originAllowed(widget, headerOf(request, 'origin'))) throw originRefused();
  const ctx: Ctx = { ...publicCtx, tenantId: widget.tenant_id };
  const token = VISITOR_TOKEN_PREFIX + randomToken(32);
  const [visitor] = await ctx.trx('webchat_visitors').insert({
    tenant_id: ctx.tenantId, id: uuidv7(ctx.now.getTime()), widget_id: widget.id, name: input.name?.trim() || null,
    email: input.email?.trim().toLowerCase() || null, token_hash: sha256Hex(token), online: true, last_seen_at: ctx.now,
    created_at: ctx.now,
  }).returning('*') as VisitorRow[];
  const conversation = await openConversation(ctx, visitor!, widget, input.message ?? null);
  await emitChatEvent(ctx, 'staff', 'visitor.online', conversation.id, visitorOut(visitor!, conversation.id));
  return { conversation_id: conversation.id, visitor_id: visitor!.id, visitor_token: token };
}

/**
 * Who is calling with a visitor token: the tenant, visitor, widget and the visitor's latest
 * conversation. Unknown token `401`; blocked visitor or a foreign `Origin` `403`.
 */
export async function visitorSession(publicCtx: Ctx, request: FastifyRequest): Promise<VisitorSession> {
  const auth = headerOf(request, 'authorization') ?? '';
  const match = /^Bearer\s+(hdv_[A-Za-z0-9_-]{20,100})$/i.exec(auth.trim());
  if (!match) throw errors.unauthenticated('Send the visitor token: Authorization: Bearer hdv_…');
  const hash = sha256Hex(match[1]!);
  const visitor = await publicCtx.trx<VisitorRow>('webchat_visitors').where('token_hash', hash)
    .comment('cross-tenant: a visitor token names its tenant').first();
  if (!visitor || !safeEqual(visitor.token_hash, hash)) throw errors.unauthenticated('The visitor token is unknown');
  const ctx: Ctx = { ...publicCtx, tenantId: visitor.tenant_id };
  if (await isBlocked(ctx, visitor.id)) throw errors.forbidden('This visitor is blocked');
  const widget = await scoped<WidgetRow>(ctx, 'webchat_widgets').where('id', visitor.widget_id).first();
  if (!widget) throw errors.unauthenticated('The visitor token is unknown');
  const origin = headerOf(request, 'origin');
  // Browsers send Origin on cross-origin calls: one from a page the widget is not allowed on is refused.
  if (origin !== undefined && !originAllowed(widget, origin)) throw originRefused();
  const conversation = await scoped<ConversationRow>(ctx, 'webchat_conversations').where('visitor_id', visitor.id)
    .orderBy('started_at', 'desc').orderBy('id', 'desc').first();
  if (!conversation) throw errors.unauthenticated('The visitor token is unknown');
  await touch(ctx, visitor, conversation.id);
  return { ctx, visitor, widget, conversation };
}

/** Counts one message against the visitor's window; `429` over the limit. */
async function spendRate(ctx: Ctx, visitor: VisitorRow): Promise<void> {
  const windowStart = new Date(Math.floor(ctx.now.getTime() / 60_000) * 60_000);
  const [row] = await scoped(ctx, 'webchat_visitors').where('id', visitor.id).update({
    rate_count: ctx.trx.raw('CASE WHEN rate_window = ? THEN rate_count + 1 ELSE 1 END', [windowStart]),
    rate_window: windowStart,
  }).returning(['rate_count']) as { rate_count: number }[];
  if (row!.rate_count > VISITOR_MESSAGES_PER_MINUTE) {
    throw errors.rateLimited((windowStart.getTime() + 60_000 - ctx.now.getTime()) / 1000, 'Too many chat messages');
  }
}

export async function postVisitorMessage(publicCtx: Ctx, request: FastifyRequest, text: string): Promise<ChatMessage> {
  const { ctx, visitor, widget, conversation } = await visitorSession(publicCtx, request);
  await spendRate(ctx, visitor);
  return visitorSays(ctx, visitor, widget, conversation.id, text);
}

export async function listVisitorMessages(publicCtx: Ctx, request: FastifyRequest): Promise<{ data: ChatMessage[] }> {
  const { ctx, conversation } = await visitorSession(publicCtx, request);
  return { data: await conversationMessages(ctx, conversation.id, 1000) as unknown as ChatMessage[] };
}

export async function visitorStream(publicCtx: Ctx, request: FastifyRequest, resume: ResumePoint): Promise<EventFeed> {
  const { ctx, conversation } = await visitorSession(publicCtx, request);
  return openVisitorStream(ctx, conversation.id, resume);
}

/** A visitor's heartbeat (the widget sends one every 30 s while open). */
export async function visitorPing(publicCtx: Ctx, request: FastifyRequest): Promise<void> {
  await visitorSession(publicCtx, request);
}
