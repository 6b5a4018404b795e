import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { uuidv7 } from '../core/ids.js';
import { paginatePage, type Page, type PageInput } from '../core/pagination.js';
import { isUniqueViolation, scoped } from '../db/tenant-scope.js';
import { recordAudit } from '../audit/service.js';
import { conversationMessages } from './events.js';
import { conversationOut, loadConversation, type ConversationRow } from './conversation-rows.js';
import { announcePresence, offerWaiting, presenceCutoff, presenceStatus, PRESENCE_TTL_SECONDS } from './offering.js';
import type { Block, BlockCreate, ChatMessage, Conversation, ConversationListQuery, OnlineVisitor, Presence, PresenceInput } from './schemas.js';

/** The agent console's reads, presence and blocks (CONTRACT §16). */

export async function listOnlineVisitors(ctx: Ctx, query: PageInput): Promise<Page<OnlineVisitor>> {
  const qb = scoped(ctx, 'webchat_visitors').where('online', true).where('last_seen_at', '>', presenceCutoff(ctx.now))
    .select('id', 'name', 'email', 'last_seen_at', ctx.trx.raw(`(SELECT c.id FROM webchat_conversations c
      WHERE c.tenant_id = webchat_visitors.tenant_id AND c.visitor_id = webchat_visitors.id
      ORDER BY c.started_at DESC, c.id DESC LIMIT 1) AS conversation_id`))
    .orderBy('last_seen_at', 'desc').orderBy('id');
  return paginatePage<OnlineVisitor & { last_seen_at: Date }, OnlineVisitor>(query, qb, (row) => ({
    id: row.id, name: row.name, email: row.email, last_seen_at: toRfc3339(row.last_seen_at)!, conversation_id: row.conversation_id,
  }));
}

export async function listConversations(ctx: Ctx, query: ConversationListQuery): Promise<Page<Conversation>> {
  const qb = scoped(ctx, 'webchat_conversations').orderBy('started_at', 'desc').orderBy('id', 'desc');
  if (query.status) qb.where('status', query.status);
  const page = await paginatePage<ConversationRow>(query, qb);
  return { data: await Promise.all(page.data.map((row) => conversationOut(ctx, row))), meta: page.meta };
}

export async function getConversation(ctx: Ctx, id: string): Promise<Conversation> {
  return conversationOut(ctx, await loadConversation(ctx, id));
}

export async function listConversationMessages(ctx: Ctx, id: string): Promise<{ data: ChatMessage[] }> {
  await loadConversation(ctx, id);
  return { data: await conversationMessages(ctx, id, 1000) as unknown as ChatMessage[] };
}

async function me(ctx: Ctx): Promise<{ id: string; name: string }> {
  if (!ctx.actor.userId) throw errors.forbidden('Only a user (or a key acting for one) has a presence');
  return { id: ctx.actor.userId, name: ctx.actor.name };
}

function presenceOut(user: { id: string; name: string }, status: Presence['status'], lastSeen: Date | null): Presence {
  return {
    user_id: user.id, name: user.name, status, last_seen_at: toRfc3339(lastSeen),
    expires_at: status === 'offline' || !lastSeen ? null : toRfc3339(new Date(lastSeen.getTime() + PRESENCE_TTL_SECONDS * 1000)),
  };
}

/** POST /webchat/presence: a heartbeat; coming online offers waiting conversations. */
export async function heartbeat(ctx: Ctx, input: PresenceInput): Promise<Presence> {
  const user = await me(ctx);
  const before = await presenceStatus(ctx, user.id);
  await ctx.trx('webchat_presence').insert({ tenant_id: ctx.tenantId, user_id: user.id, status: input.status, last_seen_at: ctx.now })
    .onConflict(['tenant_id', 'user_id']).merge({ status: input.status, last_seen_at: ctx.now });
  if (before.status !== input.status) await announcePresence(ctx, user.id, user.name, input.status, ctx.now);
  if (input.status === 'online') await offerWaiting(ctx);
  return presenceOut(user, input.status, ctx.now);
}

/** DELETE /webchat/presence: offline now; offers held by this agent go to others. */
export async function goOffline(ctx: Ctx): Promise<void> {
  const user = await me(ctx);
  const before = await presenceStatus(ctx, user.id);
  await ctx.trx('webchat_presence').insert({ tenant_id: ctx.tenantId, user_id: user.id, status: 'offline', last_seen_at: ctx.now })
    .onConflict(['tenant_id', 'user_id']).merge({ status: 'offline', last_seen_at: ctx.now });
  if (before.status !== 'offline') await announcePresence(ctx, user.id, user.name, 'offline', null);
  await offerWaiting(ctx);
}

interface BlockRow { tenant_id: string; id: string; visitor_id: string; reason: string; created_by: string | null; created_at: Date }

function blockOut(row: BlockRow): Block {
  return { id: row.id, visitor_id: row.visitor_id, reason: row.reason, created_by: row.created_by, created_at: toRfc3339(row.created_at)! };
}

export async function createBlock(ctx: Ctx, input: BlockCreate): Promise<Block> {
  const visitor = await scoped(ctx, 'webchat_visitors').where('id', input.visitor_id).first('id');
  if (!visitor) throw errors.invalid('visitor_id', 'does not exist');
  try {
    const [row] = await ctx.trx('webchat_blocks').insert({
      tenant_id: ctx.tenantId, id: uuidv7(ctx.now.getTime()), visitor_id: input.visitor_id, reason: input.reason?.trim() ?? '',
      created_by: ctx.actor.userId, created_at: ctx.now,
    }).returning('*') as BlockRow[];
    await recordAudit(ctx, { action: 'webchat_block.created', resourceType: 'webchat_block', resourceId: row!.id, changes: { visitor_id: input.visitor_id, reason: row!.reason } });
    return blockOut(row!);
  } catch (error) {
    if (isUniqueViolation(error, 'webchat_blocks_visitor')) throw errors.alreadyExists('block', 'visitor_id', input.visitor_id);
    throw error;
  }
}

export async function listBlocks(ctx: Ctx, query: PageInput): Promise<Page<Block>> {
  return paginatePage<BlockRow, Block>(query, scoped(ctx, 'webchat_blocks').orderBy('created_at', 'desc').orderBy('id', 'desc'), blockOut);
}

export async function deleteBlock(ctx: Ctx, id: string): Promise<void> {
  const deleted = await scoped(ctx, 'webchat_blocks').where('id', id).delete();
  if (!deleted) throw errors.notFound('block', id);
  await recordAudit(ctx, { action: 'webchat_block.deleted', resourceType: 'webchat_block', resourceId: id, changes: {} });
}
