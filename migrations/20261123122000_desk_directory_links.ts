import type { Knex } from 'knex';

/**
 * Where the ticket desk meets the customer directory: a ticket's team and organization become
 * foreign keys on the composite key (rule 2), so a ticket can never name another tenant's team or
 * organization, whatever path wrote it.
 *
 * ON DELETE SET NULL, on the one column only (the tenant_id half of the key stays): deleting a
 * team or an organization leaves its tickets in place, unassigned from it, in the same way the
 * directory leaves an organization's members in place, unlinked. A ticket is a customer's
 * record; it must not vanish with a team (CASCADE) nor block a team's deletion (RESTRICT).
 *
 * Rows written before this migration may name ids that do not exist (the desk stored plain
 * uuids until now, and nothing checked them): those are cleared first, or the constraint would
 * refuse to be added.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE tickets t SET team_id = NULL
      WHERE team_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM teams x WHERE x.tenant_id = t.tenant_id AND x.id = t.team_id);
    UPDATE tickets t SET organization_id = NULL
      WHERE organization_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM organizations x WHERE x.tenant_id = t.tenant_id AND x.id = t.organization_id);
    ALTER TABLE tickets ADD CONSTRAINT tickets_team
      FOREIGN KEY (tenant_id, team_id) REFERENCES teams (tenant_id, id) ON DELETE SET NULL (team_id);
    ALTER TABLE tickets ADD CONSTRAINT tickets_organization
      FOREIGN KEY (tenant_id, organization_id) REFERENCES organizations (tenant_id, id) ON DELETE SET NULL (organization_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE tickets DROP CONSTRAINT tickets_organization;
    ALTER TABLE tickets DROP CONSTRAINT tickets_team;
  `);
}
