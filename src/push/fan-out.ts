import type { Ctx } from '../core/context.js';
import { scoped, insertScoped } from '../db/tenant-scope.js';
import { uuidv7 } from '../core/ids.js';
import type { EventRecord } from '../events/models.js';
import { preferencesOf, withinActiveWindow } from './quiet-hours.js';
import { schedulePushDrain } from './send.js';
import { prepared } from '../db/prepared.js';
import { cachedConfig, configPinned } from '../db/config-cache.js';

/**
 * Who gets a browser push, decided inside the change's transaction (CONTRACT §14), as an event
 * consumer registered in src/wiring.ts:
 * - `ticket.created`: every active staff member of the ticket's team, or every active staff user
 *   when it has no team; not the person who opened it.
 * - `ticket.assignee_changed` on an `urgent` ticket: the new assignee, unless they assigned it to
 *   themselves. Sent with `Urgency: high`.
 * A user with push switched off, or outside their active window at the moment of the change, gets
 * nothing: the push is dropped, not deferred. Rows go to `push_messages`; after commit the sender
 * is woken (never awaited by the request), and the `push-send` job catches anything left over.
 */
export const PUSH_TTL_SECONDS = { normal: 24 * 3600, urgent: 3600 } as const;

/** A staff member with at least one push subscription, and those subscriptions. */
interface Recipient { id: string; timezone: string | null; notification_preferences: unknown; subscription_ids: string[] }

/**
 * Whether the tenant has any push subscription, from the configuration cache: subscribing and
 * unsubscribing bump the configuration version (migration 20261202020000). Answered only for a
 * transaction that pinned its version; otherwise the staff query below answers by itself.
 */
async function noSubscriptions(ctx: Ctx): Promise<boolean> {
  if (!configPinned(ctx)) return false;
  return !(await cachedConfig(ctx, 'push_subscribed', async () => !!(await scoped(ctx, 'push_subscriptions').first('push_subscriptions.id'))));
}

/**
 * Active staff (of `teamId` when given) who have a push subscription, each with theirs: one
 * statement, since staff without a subscription could get nothing anyway; none at all in a tenant
 * without subscriptions.
 */
async function staffRecipients(ctx: Ctx, teamId: string | null): Promise<Recipient[]> {
  if (await noSubscriptions(ctx)) return [];
  const query = scoped(ctx, 'users').where('users.active', true).whereIn('users.role', ['admin', 'agent'])
    .join('push_subscriptions as s', function () {
      this.on('s.tenant_id', 'users.tenant_id').andOn('s.user_id', 'users.id');
    })
    .groupBy('users.tenant_id', 'users.id')
    .select('users.id', 'users.timezone', 'users.notification_preferences', ctx.trx.raw('array_agg(s.id ORDER BY s.id) AS subscription_ids'));
  if (teamId) {
    query.join('team_members', function () {
      this.on('team_members.tenant_id', 'users.tenant_id').andOn('team_members.user_id', 'users.id');
    }).where('team_members.team_id', teamId);
  }
  return prepared(query);
}

interface TicketFacts { id: string; ticket_number: number | string; subject: string; team_id: string | null; priority_key: string }

/** A new ticket's facts as its `ticket.created` event carries them (written in the same transaction), else read. */
function factsOfCreated(event: EventRecord): TicketFacts | null {
  const d = event.data as Record<string, unknown>;
  const complete = typeof d.ticket_number === 'number' && typeof d.subject === 'string' && typeof d.priority === 'string'
    && (d.team_id === null || typeof d.team_id === 'string');
  return complete
    ? { id: event.ticket_id!, ticket_number: d.ticket_number as number, subject: d.subject as string, team_id: d.team_id as string | null, priority_key: d.priority as string }
    : null;
}

async function ticketFacts(ctx: Ctx, ticketId: string): Promise<TicketFacts | undefined> {
  return scoped(ctx, 'tickets').where('tickets.id', ticketId)
    .join('priorities', function () { this.on('priorities.tenant_id', 'tickets.tenant_id').andOn('priorities.id', 'tickets.priority_id'); })
    .first('tickets.id', 'tickets.ticket_number', 'tickets.subject', 'tickets.team_id', 'tickets.assigned_agent_id', 'priorities.key as priority_key');
}

async function queuePushes(ctx: Ctx, recipients: Recipient[], payload: Record<string, unknown>, urgent: boolean): Promise<number> {
  const allowed = recipients
    .filter((r) => r.id !== ctx.actor.userId)
    .filter((r) => {
      const prefs = preferencesOf(r.notification_preferences);
      return prefs.push && withinActiveWindow(prefs, r.timezone, ctx.now);
    });
  const subscriptions = allowed.flatMap((r) => r.subscription_ids);
  if (!subscriptions.length) return 0;
  await insertScoped(ctx, 'push_messages', subscriptions.map((subscriptionId) => ({
    id: uuidv7(ctx.now.getTime()),
    subscription_id: subscriptionId,
    payload: JSON.stringify(payload),
    urgency: urgent ? 'high' : 'normal',
    ttl_seconds: urgent ? PUSH_TTL_SECONDS.urgent : PUSH_TTL_SECONDS.normal,
    next_attempt_at: ctx.now,
    created_at: ctx.now,
  })));
  schedulePushDrain(ctx);
  return subscriptions.length;
}

function ticketUrl(ctx: Ctx, ticketId: string): string {
  return `${ctx.deps.config.siteUrl}/tickets/${ticketId}`;
}

export async function pushOnTicketEvent(ctx: Ctx, event: EventRecord): Promise<void> {
  if (!event.ticket_id) return;
  if (event.type === 'ticket.created') {
    const ticket = factsOfCreated(event) ?? await ticketFacts(ctx, event.ticket_id);
    if (!ticket) return;
    await queuePushes(ctx, await staffRecipients(ctx, ticket.team_id), {
      type: 'ticket.created', ticket_id: ticket.id, ticket_number: Number(ticket.ticket_number), subject: ticket.subject, url: ticketUrl(ctx, ticket.id),
    }, ticket.priority_key === 'urgent');
  } else if (event.type === 'ticket.assignee_changed') {
    const assigneeId = (event.data as { to_id?: string | null }).to_id;
    if (!assigneeId || assigneeId === ctx.actor.userId) return;
    const ticket = await ticketFacts(ctx, event.ticket_id);
    if (!ticket || ticket.priority_key !== 'urgent') return;
    const recipients = (await staffRecipients(ctx, null)).filter((r) => r.id === assigneeId);
    await queuePushes(ctx, recipients, {
      type: 'ticket.urgent_assigned', ticket_id: ticket.id, ticket_number: Number(ticket.ticket_number), subject: ticket.subject, url: ticketUrl(ctx, ticket.id),
    }, true);
  }
}
