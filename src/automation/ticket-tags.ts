import type { Ctx } from '../core/context.js';
import { scoped } from '../db/tenant-scope.js';
import { loadUser } from '../directory/users.js';
import { loadOrganization } from '../directory/organizations.js';
import { applyTicketChanges } from '../tickets/changes.js';
import { loadVisibleTicket } from '../tickets/visibility.js';
import { tagColors } from './tags.js';
import type { TagProfile, TicketTagsReplace } from './schemas.js';

/** GET/PUT /tickets/{id}/tags and the derived tag profiles of customers and organizations. */
export async function getTicketTags(ctx: Ctx, ticketId: string): Promise<{ tags: string[] }> {
  const ticket = await loadVisibleTicket(ctx, ticketId);
  return { tags: ticket.tags ?? [] };
}

/** Replaces the whole set, through the ticket's one change function (hooks run: routing may react). */
export async function replaceTicketTags(ctx: Ctx, ticketId: string, input: TicketTagsReplace): Promise<{ tags: string[] }> {
  const ticket = await loadVisibleTicket(ctx, ticketId, { forUpdate: true });
  const after = await applyTicketChanges(ctx, ticket, { tags: input.tags });
  return { tags: after.tags ?? [] };
}

const PROFILE_TAGS = 50;

/** Tag counts over the tickets that `column` = `id` (most frequent first, then by name). */
async function profileOf(ctx: Ctx, column: 'requester_id' | 'organization_id', id: string): Promise<TagProfile> {
  const total = await scoped(ctx, 'tickets').where(`tickets.${column}`, id).count({ n: '*' }).first();
  const rows: Array<{ name: string; count: string }> = await scoped(ctx, 'tickets')
    .where(`tickets.${column}`, id)
    .select(ctx.trx.raw('tag AS name'), ctx.trx.raw('count(*) AS count'))
    .joinRaw('CROSS JOIN LATERAL unnest(tickets.tags) AS tag')
    .groupBy('tag').orderByRaw('count(*) DESC, tag ASC').limit(PROFILE_TAGS);
  const tickets = Number(total?.n ?? 0);
  const colors = await tagColors(ctx, rows.map((r) => r.name));
  return {
    tickets,
    tags: rows.map((r) => ({
      name: r.name, count: Number(r.count), share: tickets ? Math.round((Number(r.count) / tickets) * 1000) / 1000 : 0, color: colors.get(r.name) ?? null,
    })),
  };
}

export async function userTagProfile(ctx: Ctx, userId: string): Promise<TagProfile> {
  await loadUser(ctx, userId);
  return profileOf(ctx, 'requester_id', userId);
}

export async function organizationTagProfile(ctx: Ctx, organizationId: string): Promise<TagProfile> {
  await loadOrganization(ctx, organizationId);
  return profileOf(ctx, 'organization_id', organizationId);
}
