import type { Knex } from 'knex';

/**
 * The inbox views: tickets of a status (and a priority), most recently updated first. With only
 * `(tenant_id, updated_at, id)` such a page walks the whole tenant's tickets by recency and throws
 * away every row of another status or priority: at a million tickets, "pending + urgent" read
 * 7,040 rows for a page of 26 (30 ms; docs/performance.md). These indexes make both filters part
 * of the range, so a page (first or 5,000 deep, by keyset cursor) reads just its own rows.
 *
 * Built CONCURRENTLY (outside a transaction) so that an existing installation keeps taking writes
 * while they build; IF NOT EXISTS lets an interrupted run be repeated.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX CONCURRENTLY IF NOT EXISTS tickets_status_updated ON tickets (tenant_id, status_id, updated_at, id)');
  await knex.raw('CREATE INDEX CONCURRENTLY IF NOT EXISTS tickets_status_priority_updated ON tickets (tenant_id, status_id, priority_id, updated_at, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS tickets_status_priority_updated');
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS tickets_status_updated');
}
