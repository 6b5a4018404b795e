import { SYSTEM_ACTOR, type Ctx, type Deps } from '../core/context.js';
import { inTransaction } from '../db/transaction.js';
import { scoped } from '../db/tenant-scope.js';
import { listTenants } from '../tenants/service.js';
import { toRfc3339 } from '../core/clock.js';
import { emitChatEvent } from './events.js';
import { announcePresence, offerWaiting, presenceCutoff } from './offering.js';
import { announce, type ConversationRow } from './conversation-rows.js';

/**
 * The `chat-sweep` job, per tenant in one transaction:
 * - abandons bot sessions (any channel) idle for BOT_IDLE_MINUTES, ending the web chat
 *   conversations still with the bot (`ended` to the visitor, `conversation.updated` to the console);
 * - announces agents whose heartbeat lapsed (`presence.changed` offline) and visitors gone quiet
 *   (`visitor.offline`), then re-offers waiting conversations whose offer lapsed with them.
 * Idempotent: what it changed is no longer due. Presence itself is computed at read time
 * (offering.ts), so nothing waits on this job for correctness, only consoles for the news.
 */
export const BOT_IDLE_MINUTES = 30;

export async function sweepTenant(ctx: Ctx): Promise<{ abandoned: number; agents_offline: number; visitors_offline: number }> {
  const idleBefore = new Date(ctx.now.getTime() - BOT_IDLE_MINUTES * 60_000);
  const sessions = await scoped(ctx, 'bot_sessions').where('status', 'active').where('last_activity_at', '<=', idleBefore)
    .update({ status: 'abandoned', ended_at: ctx.now }).returning(['id', 'conversation_id', 'channel']) as { id: string; conversation_id: string | null; channel: string }[];
  for (const session of sessions) {
    if (session.channel !== 'webchat' || !session.conversation_id) continue;
    const [row] = await scoped(ctx, 'webchat_conversations').where({ id: session.conversation_id, status: 'bot' })
      .update({ status: 'ended', ended_at: ctx.now }).returning('*') as ConversationRow[];
    if (!row) continue;
    await announce(ctx, row);
    await emitChatEvent(ctx, 'visitor', 'ended', row.id, { conversation_id: row.id, ended_at: toRfc3339(ctx.now), reason: 'abandoned' });
  }

  const cutoff = presenceCutoff(ctx.now);
  const lapsed = await ctx.trx('webchat_presence as p').join('users as u', (j) => j.on('u.tenant_id', 'p.tenant_id').andOn('u.id', 'p.user_id'))
    .where('p.tenant_id', ctx.tenantId).whereIn('p.status', ['online', 'away']).where('p.last_seen_at', '<=', cutoff)
    .select('p.user_id', 'u.name') as { user_id: string; name: string }[];
  for (const agent of lapsed) {
    await scoped(ctx, 'webchat_presence').where('user_id', agent.user_id).update({ status: 'offline' });
    await announcePresence(ctx, agent.user_id, agent.name, 'offline', null);
  }
  const quiet = await scoped(ctx, 'webchat_visitors').where('online', true).where('last_seen_at', '<=', cutoff)
    .update({ online: false }).returning(['id', 'name', 'email', 'last_seen_at']) as { id: string; name: string | null; email: string | null; last_seen_at: Date }[];
  for (const visitor of quiet) {
    await emitChatEvent(ctx, 'staff', 'visitor.offline', null, {
      id: visitor.id, name: visitor.name, email: visitor.email, last_seen_at: toRfc3339(visitor.last_seen_at), conversation_id: null,
    });
  }
  if (lapsed.length) await offerWaiting(ctx);
  return { abandoned: sessions.length, agents_offline: lapsed.length, visitors_offline: quiet.length };
}

export async function chatSweep(deps: Deps, now: Date): Promise<Record<string, number>> {
  const totals = { tenants: 0, abandoned: 0, agents_offline: 0, visitors_offline: 0 };
  for (const tenant of await listTenants(deps.db)) {
    const done = await inTransaction(deps, { tenantId: tenant.id, actor: SYSTEM_ACTOR, now }, (ctx) => sweepTenant(ctx));
    totals.tenants += 1;
    totals.abandoned += done.abandoned;
    totals.agents_offline += done.agents_offline;
    totals.visitors_offline += done.visitors_offline;
  }
  return totals;
}
