import type { Knex } from 'knex';

/**
 * Dirty-hour marks without a hot row. The report triggers marked an hour dirty with
 * `INSERT … ON CONFLICT (tenant_id, hour) DO UPDATE`: every ticket created or replied to in the same
 * hour updated the same row, and held its lock from the trigger (the ticket's INSERT, early in the
 * transaction) until the commit. One tenant's creates and replies therefore ran one at a time: at a
 * million tickets on 2 idle cores, 27 creates/s with the ticket INSERT waiting 190 ms on average.
 *
 * Now every marking statement appends its own rows (no unique key, nothing to wait for); the
 * `report-rollup` job claims mark rows by id (FOR UPDATE SKIP LOCKED), recomputes their hours and
 * deletes exactly the rows it claimed. A change that commits after the claim has a row of its own
 * that was not claimed, so its hour is recomputed by the next run: never left stale, as before.
 * Readers take the distinct hours. The triggers are rewritten in place: only their ON CONFLICT
 * clause goes.
 */
const CLAUSE = 'ON CONFLICT (tenant_id, hour) DO UPDATE SET marked_at = excluded.marked_at';
/** What stands in the clause's place, so that `down` can put it back. */
const APPEND = '/* marks append: migration 20261128170100 */';

async function rewriteTriggers(knex: Knex, from: string, to: string): Promise<void> {
  await knex.raw(`
    DO $$
    DECLARE f record;
    BEGIN
      FOR f IN SELECT p.oid FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                WHERE n.nspname = current_schema() AND p.prosrc LIKE '%report_rollup_dirty%' LOOP
        EXECUTE replace(pg_get_functiondef(f.oid), ${quote(from)}, ${quote(to)});
      END LOOP;
    END $$;
  `);
}

function quote(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE report_rollup_dirty DROP CONSTRAINT report_rollup_dirty_pkey;
    ALTER TABLE report_rollup_dirty ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY;
    CREATE INDEX report_rollup_dirty_hour ON report_rollup_dirty (tenant_id, hour);
  `);
  await rewriteTriggers(knex, CLAUSE, APPEND);
}

export async function down(knex: Knex): Promise<void> {
  // Keep one row per hour again (the newest mark), then restore the key and the clause.
  await knex.raw(`
    DELETE FROM report_rollup_dirty d USING report_rollup_dirty e
     WHERE e.tenant_id = d.tenant_id AND e.hour = d.hour AND e.id > d.id;
    DROP INDEX report_rollup_dirty_hour;
    ALTER TABLE report_rollup_dirty DROP COLUMN id;
    ALTER TABLE report_rollup_dirty ADD PRIMARY KEY (tenant_id, hour);
  `);
  await rewriteTriggers(knex, APPEND, CLAUSE);
}
