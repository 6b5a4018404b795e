import type { Ctx } from '../core/context.js';
import { scoped } from '../db/tenant-scope.js';
import type { EventRecord } from '../events/models.js';
import type { Ticket } from '../tickets/models.js';
import { preferencesOf } from '../push/quiet-hours.js';
import { statusById } from '../vocab/lookup.js';
import { RECIPIENT_USER_COLUMNS, requesterAndCollaborators, type RecipientUserRow as UserRow } from './conversation-port.js';
import type { Identifier } from './template-defaults.js';
import { prepared } from '../db/prepared.js';
import { columnList } from '../db/column-list.js';

/**
 * Who gets which notification for an event: CONTRACT §14, exactly.
 *   ticket.created          → ticket.created.customer (requester), ticket.created.agent (assignee, else team)
 *   ticket.assignee_changed → ticket.assigned (the new assignee)
 *   ticket.message_created  → public staff reply: ticket.reply.customer (requester + collaborators);
 *                             customer message: ticket.reply.agent (assignee, else team); private: none
 *   ticket.status_changed   → into category resolved: ticket.resolved (requester)
 *   ticket.sla_warning      → sla.warning (the team's leads and the tenant's admins)
 * Never the actor of the change (except the requester's own confirmation), never inactive users,
 * agent mail only to active staff who did not turn mail off (`notification_preferences.email`;
 * customer mail ignores that switch, CONTRACT §14).
 */
export interface Recipient { userId: string | null; email: string; name: string; locale: string | null }
export interface Planned { identifier: Identifier; recipients: Recipient[] }

/**
 * The names of the users a plan read, by id: the notifications' template values take the
 * requester's and the assignee's names from here rather than reading them again.
 */
export type KnownNames = Map<string, string>;

const RECIPIENT_USER_SELECT = RECIPIENT_USER_COLUMNS.map((column) => `users.${column}`);

/** Users matching `build`; their names join `known`. */
async function usersWhere(ctx: Ctx, build: (qb: ReturnType<typeof scoped>) => void, known: KnownNames): Promise<UserRow[]> {
  const qb = scoped(ctx, 'users').select(ctx.trx.raw(columnList(RECIPIENT_USER_SELECT)));
  build(qb);
  const rows = await (qb as unknown as Promise<UserRow[]>);
  for (const row of rows) known.set(row.id, row.name);
  return rows;
}

const asRecipient = (u: UserRow): Recipient => ({ userId: u.id, email: u.email, name: u.name, locale: u.locale });
/** The user as a recipient when active (a requester who was deactivated gets no mail). */
const ifActive = (u: UserRow | null): Recipient[] => (u?.active ? [asRecipient(u)] : []);
const isStaff = (u: UserRow) => u.active && (u.role === 'admin' || u.role === 'agent');
/** Who may get agent mail: active staff whose preferences leave email on (the preferences' defaults apply). */
const takesAgentMail = (u: UserRow) => isStaff(u) && preferencesOf(u.notification_preferences).email;

/** Users the emitter already holds (current in the transaction), by id. */
type HeldUsers = ReadonlyMap<string, UserRow>;

async function userById(ctx: Ctx, id: string | null, known: KnownNames, held: HeldUsers): Promise<UserRow | null> {
  if (!id) return null;
  const user = held.get(id);
  if (user) {
    known.set(user.id, user.name);
    return user;
  }
  // A lookup by key: prepared (src/db/prepared.ts); the lists of team members and admins are not.
  return (await usersWhere(ctx, (qb) => prepared(qb.where('users.id', id)), known))[0] ?? null;
}

async function teamMembers(ctx: Ctx, teamId: string | null, leadsOnly: boolean, known: KnownNames): Promise<UserRow[]> {
  if (!teamId) return [];
  return usersWhere(ctx, (qb) => {
    qb.join('team_members as m', function joinMember() {
      this.on('m.tenant_id', 'users.tenant_id').andOn('m.user_id', 'users.id');
    }).where('m.team_id', teamId);
    if (leadsOnly) qb.where('m.is_lead', true);
  }, known);
}

/** The assignee, else the team's members: who handles a ticket. */
async function handlers(ctx: Ctx, ticket: Ticket, known: KnownNames, held: HeldUsers): Promise<UserRow[]> {
  const assignee = await userById(ctx, ticket.assigned_agent_id, known, held);
  if (assignee) return [assignee];
  return teamMembers(ctx, ticket.team_id, false, known);
}

/**
 * Addresses under the reserved `.invalid` top-level domain cannot receive mail: the customers a
 * messaging channel creates carry one (`<channel>.<id>@channels.invalid`) and are answered on
 * their channel instead.
 */
const undeliverable = (email: string) => /\.invalid$/i.test(email);

function distinct(list: Recipient[], actorId: string | null, keepActor = false): Recipient[] {
  const seen = new Set<string>();
  return list.filter((r) => {
    const key = r.email.toLowerCase();
    if (seen.has(key) || undeliverable(key)) return false;
    seen.add(key);
    return keepActor || !actorId || r.userId !== actorId;
  });
}

/** A public staff reply's recipients: the requester (when active), then the collaborators, read in one statement. */
async function replyAudience(ctx: Ctx, ticket: Ticket, known: KnownNames): Promise<Recipient[]> {
  const { requester, collaborators } = await requesterAndCollaborators(ctx, ticket.requester_id, ticket.id);
  if (requester) known.set(requester.id, requester.name);
  return [
    ...ifActive(requester),
    ...collaborators.map((c) => ({ userId: c.user_id, email: c.email, name: c.name ?? c.email, locale: null })),
  ];
}

const NOTIFYING_EVENTS = new Set(['ticket.created', 'ticket.assignee_changed', 'ticket.message_created', 'ticket.status_changed', 'ticket.sla_warning']);

/**
 * Whether an event may notify anyone, decided from the event alone (and the cached statuses), so
 * that events which never do — private notes, status changes outside `resolved` — read nothing.
 */
export async function mayNotify(ctx: Ctx, event: EventRecord): Promise<boolean> {
  if (!NOTIFYING_EVENTS.has(event.type) || !event.ticket_id) return false;
  const data = event.data as Record<string, unknown>;
  if (event.type === 'ticket.message_created') return !data.is_private;
  if (event.type === 'ticket.status_changed') return (data.to_id ? (await statusById(ctx, data.to_id as string))?.category : undefined) === 'resolved';
  return true;
}

/**
 * The notifications of one event; the names of the users it read join `known`. `heldUsers`: user
 * rows the emitter handed over with the event (a create's requester), used instead of reading them.
 */
export async function plan(ctx: Ctx, event: EventRecord, ticket: Ticket, known: KnownNames, heldUsers: readonly object[] = []): Promise<Planned[]> {
  const actor = event.actor_id;
  const data = event.data as Record<string, unknown>;
  const held: HeldUsers = new Map((heldUsers as UserRow[]).map((user) => [user.id, user]));
  // The requester is read only for the notifications that go to them.
  const requesterList = async () => ifActive(await userById(ctx, ticket.requester_id, known, held));
  switch (event.type) {
    case 'ticket.created':
      return [
        { identifier: 'ticket.created.customer', recipients: distinct(await requesterList(), actor, true) },
        { identifier: 'ticket.created.agent', recipients: distinct((await handlers(ctx, ticket, known, held)).filter(takesAgentMail).map(asRecipient), actor) },
      ];
    case 'ticket.assignee_changed': {
      const assignee = await userById(ctx, (data.to_id as string | null) ?? null, known, held);
      return [{ identifier: 'ticket.assigned', recipients: distinct(assignee && takesAgentMail(assignee) ? [asRecipient(assignee)] : [], actor) }];
    }
    case 'ticket.message_created': {
      if (data.is_private) return [];
      if (data.is_agent) return [{ identifier: 'ticket.reply.customer', recipients: distinct(await replyAudience(ctx, ticket, known), actor) }];
      return [{ identifier: 'ticket.reply.agent', recipients: distinct((await handlers(ctx, ticket, known, held)).filter(takesAgentMail).map(asRecipient), actor) }];
    }
    case 'ticket.status_changed': {
      const to = data.to_id ? await statusById(ctx, data.to_id as string) : undefined;
      if (to?.category !== 'resolved') return [];
      return [{ identifier: 'ticket.resolved', recipients: distinct(await requesterList(), actor) }];
    }
    case 'ticket.sla_warning': {
      const leads = await teamMembers(ctx, ticket.team_id, true, known);
      const admins = await usersWhere(ctx, (qb) => qb.where('users.role', 'admin').where('users.active', true), known);
      return [{ identifier: 'sla.warning', recipients: distinct([...leads, ...admins].filter(takesAgentMail).map(asRecipient), actor) }];
    }
    default:
      return [];
  }
}
