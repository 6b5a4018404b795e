import type { Ctx } from '../core/context.js';
import { scoped } from '../db/tenant-scope.js';
import { emitChatEvent } from './events.js';
import { announce, type ConversationRow } from './conversation-rows.js';

/**
 * Presence and offering (CONTRACT §16).
 *
 * Presence is a heartbeat: an agent is `online` or `away` while their last heartbeat is under
 * PRESENCE_TTL_SECONDS old, `offline` after it (or after DELETE /webchat/presence). The state is
 * computed at read time from `last_seen_at` and `now`, so it is right in every daemon and at any
 * simulated time without waiting for a job; the `chat-sweep` job only *announces* the lapse
 * (`presence.changed`) to open consoles.
 *
 * Offering: a `waiting` conversation is offered to an online agent who is under their
 * `max_concurrent_conversations` (the directory's capacity, also used by ticket routing; null is
 * no limit), least loaded first, ties to the lower id. Load is the agent's active conversations
 * plus those offered to them and not yet taken. Offering takes the same per-tenant advisory lock
 * as ticket routing (src/automation/agents.ts), so two daemons offering at once cannot both fill
 * an agent's last slot.
 */
export const PRESENCE_TTL_SECONDS = 60;

export function presenceCutoff(now: Date): Date {
  return new Date(now.getTime() - PRESENCE_TTL_SECONDS * 1000);
}

export async function onlineAgentCount(ctx: Ctx): Promise<number> {
  const row = await scoped(ctx, 'webchat_presence').where('status', 'online').where('last_seen_at', '>', presenceCutoff(ctx.now))
    .count({ n: '*' }).first() as { n: string } | undefined;
  return Number(row?.n ?? 0);
}

interface Candidate { id: string; name: string; load: number; max_concurrent_conversations: number | null }

async function candidates(ctx: Ctx, except: string | null): Promise<Candidate[]> {
  const { rows } = await ctx.trx.raw<{ rows: Candidate[] }>(`
    SELECT u.id, u.name, u.max_concurrent_conversations,
           (SELECT count(*)::int FROM webchat_conversations c
             WHERE c.tenant_id = u.tenant_id AND c.status IN ('active', 'waiting')
               AND (c.assigned_agent_id = u.id OR (c.status = 'waiting' AND c.offered_to_id = u.id))) AS load
      FROM webchat_presence p
      JOIN users u ON u.tenant_id = p.tenant_id AND u.id = p.user_id
     WHERE p.tenant_id = ? AND p.status = 'online' AND p.last_seen_at > ?
       AND u.active AND u.role IN ('admin', 'agent') AND (?::uuid IS NULL OR u.id <> ?::uuid)
     ORDER BY load, u.id`, [ctx.tenantId, presenceCutoff(ctx.now), except, except]);
  return rows.filter((c) => c.max_concurrent_conversations === null || c.load < c.max_concurrent_conversations);
}

/**
 * Offers waiting conversations (oldest first) that nobody eligible holds an offer for. Returns
 * how many were offered. Idempotent: run after every change that frees or adds capacity.
 */
export async function offerWaiting(ctx: Ctx, options: { except?: string | null } = {}): Promise<number> {
  await ctx.trx.raw("SELECT pg_advisory_xact_lock(hashtext('helpdesk-routing:' || ?::text))", [ctx.tenantId]);
  const cutoff = presenceCutoff(ctx.now);
  // Offers to agents gone offline lapse: the conversation is offered again.
  const waiting = await scoped<{ id: string; offered_to_id: string | null }>(ctx, 'webchat_conversations')
    .where('status', 'waiting')
    .where((w) => w.whereNull('offered_to_id').orWhereNotExists((q) => q.from('webchat_presence as p')
      .whereRaw('p.tenant_id = webchat_conversations.tenant_id AND p.user_id = webchat_conversations.offered_to_id')
      .where('p.status', 'online').where('p.last_seen_at', '>', cutoff)))
    .orderBy('started_at').orderBy('id').limit(100).select('id', 'offered_to_id');
  let offered = 0;
  for (const conversation of waiting) {
    const [best] = await candidates(ctx, options.except ?? null);
    if (!best) {
      if (conversation.offered_to_id) await setOffer(ctx, conversation.id, null);
      continue;
    }
    await setOffer(ctx, conversation.id, best.id);
    offered += 1;
  }
  return offered;
}

async function setOffer(ctx: Ctx, id: string, agentId: string | null): Promise<void> {
  const [row] = await scoped(ctx, 'webchat_conversations').where('id', id).update({ offered_to_id: agentId }).returning('*') as ConversationRow[];
  await announce(ctx, row!);
}

/** Records a heartbeat; answers the previous effective status (to announce changes). */
export async function presenceStatus(ctx: Ctx, userId: string): Promise<{ status: 'online' | 'away' | 'offline'; last_seen_at: Date | null }> {
  const row = await scoped<{ status: 'online' | 'away' | 'offline'; last_seen_at: Date }>(ctx, 'webchat_presence').where('user_id', userId).first();
  if (!row) return { status: 'offline', last_seen_at: null };
  return { status: row.last_seen_at > presenceCutoff(ctx.now) ? row.status : 'offline', last_seen_at: row.last_seen_at };
}

export async function announcePresence(ctx: Ctx, userId: string, name: string, status: string, lastSeen: Date | null): Promise<void> {
  await emitChatEvent(ctx, 'staff', 'presence.changed', null, {
    user_id: userId, name, status, last_seen_at: lastSeen?.toISOString() ?? null,
    expires_at: status === 'offline' || !lastSeen ? null : new Date(lastSeen.getTime() + PRESENCE_TTL_SECONDS * 1000).toISOString(),
  });
}
