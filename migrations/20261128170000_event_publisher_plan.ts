import type { Knex } from 'knex';

/**
 * The event publisher without a quadratic plan. `events_publish_pending` joins the events it
 * numbers (read through the partial index `events_unnumbered`) with the same events again. That
 * index is nearly always empty when statistics are taken, so the planner expects one row on each
 * side and picks a nested loop that rescans the whole pending list for every event: harmless for
 * the handful a request commits, but 10,000 pending events (a bulk import, or a backlog after a
 * crash) took 27.7 s, 50,000 would take minutes while holding the tenant's publisher lock. Run
 * without nested loops (a setting of this function only), the same statement is a hash or merge
 * join: 10,000 events in 0.19 s, 50,000 in 1.1 s, whatever the statistics say. Numbering order,
 * locking and NOTIFY are unchanged (migration 20261128140000_event_publisher).
 */
const BODY = `
    DECLARE
      numbered integer;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('helpdesk-events:' || tenant::text));
      -- A fresh snapshot (a new statement of a volatile function, READ COMMITTED): every event
      -- committed before the lock was granted, including those of the previous run, is seen.
      WITH pending AS (
        SELECT p.id, nextval('event_seq') AS seq
          FROM (SELECT id FROM events WHERE tenant_id = tenant AND seq IS NULL ORDER BY id) p
      )
      UPDATE events e SET seq = pending.seq
        FROM pending
       WHERE e.tenant_id = tenant AND e.id = pending.id AND e.seq IS NULL;
      GET DIAGNOSTICS numbered = ROW_COUNT;
      IF numbered > 0 THEN
        PERFORM pg_notify('helpdesk_events', tenant::text);
      END IF;
      RETURN numbered;
    END`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE OR REPLACE FUNCTION events_publish_pending(tenant uuid) RETURNS integer LANGUAGE plpgsql
    SET enable_nestloop = off AS $$${BODY} $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`CREATE OR REPLACE FUNCTION events_publish_pending(tenant uuid) RETURNS integer LANGUAGE plpgsql
    AS $$${BODY} $$`);
}
