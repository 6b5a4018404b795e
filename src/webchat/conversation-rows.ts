import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { scoped } from '../db/tenant-scope.js';
import { emitChatEvent } from './events.js';
import type { Conversation } from './schemas.js';

/**
 * A chat conversation's and visitor's rows, the conversation as the API shows it, and its
 * announcement to the console: what the conversation lifecycle (conversations.ts), the offering
 * of waiting chats (offering.ts) and the sweep all use, kept apart so they need not import each
 * other.
 */
export interface ConversationRow {
  tenant_id: string; id: string; widget_id: string; visitor_id: string; status: Conversation['status'];
  assigned_agent_id: string | null; offered_to_id: string | null; ticket_id: string | null; bot_session_id: string | null;
  started_at: Date; ended_at: Date | null; last_message_at: Date;
}

export interface VisitorRow {
  tenant_id: string; id: string; widget_id: string; name: string | null; email: string | null; token_hash: string;
  user_id: string | null; online: boolean; last_seen_at: Date; rate_window: Date | null; rate_count: number; created_at: Date;
}

export async function conversationOut(ctx: Ctx, row: ConversationRow, visitor?: VisitorRow): Promise<Conversation> {
  const v = visitor ?? await scoped<VisitorRow>(ctx, 'webchat_visitors').where('id', row.visitor_id).first();
  return {
    id: row.id, widget_id: row.widget_id, visitor: { id: row.visitor_id, name: v?.name ?? null, email: v?.email ?? null },
    status: row.status, assigned_agent_id: row.assigned_agent_id, offered_to_id: row.offered_to_id, ticket_id: row.ticket_id,
    started_at: toRfc3339(row.started_at)!, ended_at: toRfc3339(row.ended_at), last_message_at: toRfc3339(row.last_message_at)!,
  };
}

export async function loadConversation(ctx: Ctx, id: string, forUpdate = false): Promise<ConversationRow> {
  const qb = scoped<ConversationRow>(ctx, 'webchat_conversations').where('id', id);
  if (forUpdate) qb.forUpdate();
  const row = await qb.first();
  if (!row) throw errors.notFound('conversation', id);
  return row;
}

/** Announces a conversation's new state to the console. */
export async function announce(ctx: Ctx, row: ConversationRow, type = 'conversation.updated'): Promise<void> {
  await emitChatEvent(ctx, 'staff', type, row.id, await conversationOut(ctx, row) as unknown as Record<string, unknown>);
}

