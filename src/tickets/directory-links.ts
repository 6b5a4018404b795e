import type { Ctx } from '../core/context.js';

/**
 * Where tickets meet teams and organizations, which the directory branch builds. Until both are
 * merged these are deliberate stand-ins, each one place for the lead to wire:
 * - `assertTeamExists` accepts any uuid now; wired, it answers 422 `team_id` "does not exist" for
 *   an unknown (or other tenant's) team. The foreign key `tickets (tenant_id, team_id) → teams`
 *   added at merge is the backstop.
 * - `teamName` / `organizationName` give the names for event payloads and the timeline (null now).
 * - `sharedOrganizationIds` lists the organizations whose tickets a customer may see besides their
 *   own (organizations that share tickets with members); none now.
 */
export async function assertTeamExists(_ctx: Ctx, _teamId: string): Promise<void> {
  // Wired at merge with the directory: look the team up with the teams model, else throw
  // errors.validation([{ field: 'team_id', message: 'does not exist' }]).
}

export async function teamName(_ctx: Ctx, _teamId: string | null): Promise<string | null> {
  return null;
}

export async function organizationName(_ctx: Ctx, _organizationId: string | null): Promise<string | null> {
  return null;
}

export async function sharedOrganizationIds(_ctx: Ctx, _customerId: string): Promise<string[]> {
  return [];
}
