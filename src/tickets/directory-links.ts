import type { Ctx } from '../core/context.js';
import type { FieldProblem } from '../core/errors.js';
import { OrganizationRecord, TeamRecord, UserRecord } from '../directory/models.js';

/**
 * Where tickets meet the directory's teams and organizations (the foreign keys of
 * migrations/20261123122000_desk_directory_links.ts are the backstop of these checks).
 */

/**
 * A team named by a ticket write must be one of ctx's tenant: an unknown id and another tenant's
 * id are the same problem, `team_id does not exist` (422), like the other references of a ticket
 * (references.ts). Pushed onto `problems`, so one answer names every problem of the body.
 */
export async function checkTeamExists(ctx: Ctx, teamId: string, problems: FieldProblem[], field = 'team_id'): Promise<boolean> {
  const exists = Boolean(await TeamRecord.findIn(ctx, teamId));
  if (!exists) problems.push({ field, message: 'does not exist' });
  return exists;
}

/** The team's name for event payloads and the timeline (null: no team, or deleted since). */
export async function teamName(ctx: Ctx, teamId: string | null): Promise<string | null> {
  if (!teamId) return null;
  return (await TeamRecord.findIn(ctx, teamId))?.name ?? null;
}

export async function organizationName(ctx: Ctx, organizationId: string | null): Promise<string | null> {
  if (!organizationId) return null;
  return (await OrganizationRecord.findIn(ctx, organizationId))?.name ?? null;
}

/**
 * The organizations whose tickets a customer may see besides their own: theirs, while it shares
 * tickets with its members (`shares_tickets`). Read per request, so switching sharing off or
 * moving the customer to another organization takes effect at once.
 */
export async function sharedOrganizationIds(ctx: Ctx, customerId: string): Promise<string[]> {
  const rows = await OrganizationRecord.scoped(ctx)
    .whereExists(UserRecord.scoped(ctx).where('users.id', customerId)
      .whereColumn('users.tenant_id', 'organizations.tenant_id').whereColumn('users.organization_id', 'organizations.id'))
    .where('organizations.shares_tickets', true)
    .select('organizations.id');
  return rows.map((r) => r.id);
}
