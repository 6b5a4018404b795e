import type { Knex } from 'knex';

/**
 * The event publisher without a quadratic plan. `events_publish_pending` joins the events it
 * numbers (read through the partial index `events_unnumbered`) with the same events again. That
 * index is nearly always empty when statistics are taken, so the planner expects one row on each
 * side and picks a nested loop that rescans the whole pending list for every event: harmless for
 * the handful a request commits, but 10,000 pending events (a bulk import, or a backlog after a
 * crash) took 27.7 s, 50,000 would take minutes while holding the tenant's publisher lock. Run
 * without nested loops (a setting of this function only), the same statement is a hash or merge
 * join: 10,000 events in 0.19 s, 50,000 in 1.1 s, whatever the statistics say. The function itself
 * (numbering order, locking, NOTIFY) is unchanged (migration 20261128140000_event_publisher).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER FUNCTION events_publish_pending(uuid) SET enable_nestloop = off');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER FUNCTION events_publish_pending(uuid) RESET enable_nestloop');
}
