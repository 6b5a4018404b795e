import type { Knex } from 'knex';

/**
 * REST imports run as the `legacy-import` background job: the run row keeps what the job needs to
 * start (and, after a daemon restart, to resume) it. The source with its password is stored
 * encrypted (`source_enc`, cleared when the run ends); `actor` is who started it (the author of
 * its events); `phase` and `result` are updated while it runs, so polling shows progress.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE legacy_imports
      ADD COLUMN source_enc text,
      ADD COLUMN source_timezone text NOT NULL DEFAULT 'UTC',
      ADD COLUMN actor jsonb,
      ADD COLUMN phase text,
      ADD COLUMN attempts integer NOT NULL DEFAULT 0;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE legacy_imports DROP COLUMN source_enc, DROP COLUMN source_timezone, DROP COLUMN actor,
      DROP COLUMN phase, DROP COLUMN attempts;
  `);
}
