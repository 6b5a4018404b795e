import type { Knex } from 'knex';

/**
 * Covering indexes for the reports (docs/reports.md "Speed"): the aggregates over tickets created
 * or resolved in a window read only these index entries (index-only scans), never the ticket rows,
 * whose pages are large (subject, custom fields, SLA state). Measured with bench/reports.ts: the
 * overview's created-in-window aggregate went from a bitmap heap scan over ~7,000 pages to an
 * index range for a 30-day window at a million tickets.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX tickets_report_created ON tickets (tenant_id, created_at)
      INCLUDE (id, first_responded_at, resolved_at, assigned_agent_id, team_id, channel, reopened_count);
    DROP INDEX tickets_resolved_at;
    CREATE INDEX tickets_resolved_at ON tickets (tenant_id, resolved_at)
      INCLUDE (created_at, assigned_agent_id, team_id, channel) WHERE resolved_at IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS tickets_report_created;
    DROP INDEX tickets_resolved_at;
    CREATE INDEX tickets_resolved_at ON tickets (tenant_id, resolved_at) WHERE resolved_at IS NOT NULL;
  `);
}
