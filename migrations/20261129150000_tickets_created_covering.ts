import type { Knex } from 'knex';

/**
 * `tickets_created (tenant_id, created_at, id)` (the list by creation) and `tickets_report_created
 * (tenant_id, created_at) INCLUDE (id, …)` (the reports' index-only scans) ordered the same rows
 * the same way: one index now serves both, keyed as the list needs and covering what the reports
 * read. Every insert of a ticket, and every update of an indexed column, writes one index entry
 * fewer (docs/performance.md).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX tickets_created_covering ON tickets (tenant_id, created_at, id)
      INCLUDE (first_responded_at, resolved_at, assigned_agent_id, team_id, channel, reopened_count);
    DROP INDEX tickets_created;
    DROP INDEX tickets_report_created;
    ALTER INDEX tickets_created_covering RENAME TO tickets_created;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX tickets_created;
    CREATE INDEX tickets_created ON tickets (tenant_id, created_at, id);
    CREATE INDEX tickets_report_created ON tickets (tenant_id, created_at)
      INCLUDE (id, first_responded_at, resolved_at, assigned_agent_id, team_id, channel, reopened_count);
  `);
}
