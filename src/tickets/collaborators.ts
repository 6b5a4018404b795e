import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { paginatePage, type Page, type PageInput } from '../core/pagination.js';
import { scoped } from '../db/tenant-scope.js';
import { recordEvent } from '../events/record.js';
import { normaliseEmail } from '../directory/user-store.js';
import type { Ticket } from './models.js';
import { TicketCollaborator } from './ops-models.js';
import { assertNotClosed, loadTicket, usersById } from './ops-access.js';
import type { Collaborator, CollaboratorInput } from './ops-schemas.js';

/**
 * CC collaborators of a ticket: users of the tenant (`{user_id}`) or bare email addresses
 * (`{email, name?}`; no user is created for them). An email that belongs to a user of the tenant
 * (primary address) is stored as that user, so one person is never listed twice. The requester
 * is not a collaborator of their own ticket (422). Adding someone twice is `409 already_exists`;
 * adding anyone to a closed ticket `409 conflict`.
 *
 * Removal is addressed by `DELETE /tickets/{id}/collaborators/{userId}`, where `userId` is the
 * collaborator's user id or, for a bare email (which has no user), the collaborator's `id`.
 * Events: `ticket.collaborator_added` (from empty, to the name or email) and
 * `ticket.collaborator_removed` (from the name or email, to empty).
 */

type CollaboratorRow = { id: string; ticket_id: string; user_id: string | null; email: string | null; name: string | null; created_at: Date;
  user_email: string | null; user_name: string | null };

function collaboratorOut(row: CollaboratorRow): Collaborator {
  return {
    id: row.id,
    ticket_id: row.ticket_id,
    user_id: row.user_id,
    email: (row.user_id ? row.user_email : row.email) ?? '',
    name: row.user_id ? row.user_name : row.name,
    created_at: toRfc3339(row.created_at)!,
  };
}

/** How the timeline names a collaborator: the name, else the email. */
const displayName = (c: Collaborator): string => c.name ?? c.email;

function collaboratorsOf(ctx: Ctx, ticketId: string) {
  return scoped(ctx, 'ticket_collaborators as c')
    .leftJoin('users as u', function joinUser() {
      this.on('u.tenant_id', 'c.tenant_id').andOn('u.id', 'c.user_id');
    })
    .where('c.ticket_id', ticketId)
    .select('c.*', 'u.email as user_email', 'u.name as user_name');
}

export async function listCollaborators(ctx: Ctx, id: string, query: PageInput): Promise<Page<Collaborator>> {
  await loadTicket(ctx, id);
  const qb = collaboratorsOf(ctx, id).orderBy('c.created_at', 'asc').orderBy('c.id', 'asc');
  return paginatePage<CollaboratorRow, Collaborator>(query, qb, collaboratorOut);
}

/** Exactly one of user_id and email, named in the problem when not. */
function checkInput(input: CollaboratorInput): void {
  if (input.user_id && input.email) throw errors.validation([{ field: 'email', message: 'cannot be combined with user_id' }]);
  if (!input.user_id && !input.email) throw errors.validation([{ field: 'user_id', message: 'or email is required' }]);
  if (input.user_id && input.name !== undefined) throw errors.validation([{ field: 'name', message: 'is taken from the user; send it only with email' }]);
}

export async function addCollaborator(ctx: Ctx, id: string, input: CollaboratorInput): Promise<Collaborator> {
  checkInput(input);
  const ticket = await loadTicket(ctx, id, { forUpdate: true });
  // Closed is final: nobody new joins the conversation (removing someone stays possible).
  await assertNotClosed(ctx, ticket);
  let userId = input.user_id ?? null;
  let email: string | null = null;
  if (userId) {
    if (!(await usersById(ctx, [userId])).has(userId)) throw errors.notFound('user', userId);
  } else {
    email = normaliseEmail(input.email!);
    const user = await scoped<{ id: string }>(ctx, 'users').whereRaw('lower(email) = ?', [email]).first('id');
    if (user) {
      userId = user.id;
      email = null;
    }
  }
  if (userId && userId === ticket.requester_id) {
    throw errors.validation([{ field: input.user_id ? 'user_id' : 'email', message: "is the ticket's requester" }]);
  }
  // The ticket is locked, so nobody adds the same person between this look and the insert.
  const taken = await TicketCollaborator.scoped(ctx).where('ticket_id', id).where(userId ? { user_id: userId } : { email }).first();
  if (taken) throw errors.alreadyExists('collaborator', input.user_id ? 'user_id' : 'email', input.user_id ?? input.email!);
  const row = await TicketCollaborator.insertIn(ctx, {
    ticket_id: id, user_id: userId, email, name: userId ? null : input.name?.trim() ?? null, added_by: ctx.actor.userId, created_at: ctx.now,
  });
  const out = collaboratorOut(await collaboratorsOf(ctx, id).where('c.id', row.id).first());
  await recordCollaboratorEvent(ctx, 'ticket.collaborator_added', ticket, out);
  return out;
}

export async function removeCollaborator(ctx: Ctx, id: string, userIdOrCollaboratorId: string): Promise<void> {
  const ticket = await loadTicket(ctx, id, { forUpdate: true });
  const row = await collaboratorsOf(ctx, id)
    .where((w) => w.where('c.user_id', userIdOrCollaboratorId).orWhere('c.id', userIdOrCollaboratorId))
    .first() as CollaboratorRow | undefined;
  if (!row) throw errors.notFound('collaborator', userIdOrCollaboratorId);
  await TicketCollaborator.scoped(ctx).where('ticket_collaborators.id', row.id).delete();
  await recordCollaboratorEvent(ctx, 'ticket.collaborator_removed', ticket, collaboratorOut(row));
}

async function recordCollaboratorEvent(ctx: Ctx, type: 'ticket.collaborator_added' | 'ticket.collaborator_removed', ticket: Ticket, c: Collaborator) {
  const added = type === 'ticket.collaborator_added';
  await recordEvent(ctx, {
    type, subjectType: 'ticket', ticketId: ticket.id,
    from: added ? null : displayName(c),
    to: added ? displayName(c) : null,
    data: {
      ticket_id: ticket.id, from: added ? null : displayName(c), to: added ? displayName(c) : null,
      collaborator: { id: c.id, user_id: c.user_id, email: c.email, name: c.name },
      actor_id: ctx.actor.userId, actor_name: ctx.actor.name,
    },
  });
}
