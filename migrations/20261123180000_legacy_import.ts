import type { Knex } from 'knex';

/**
 * The legacy import (CONTRACT §12). `legacy_import_map` remembers, per tenant, which row each
 * legacy id became; it is written in the same transaction as the row, so a re-run skips what is
 * there and a run killed half-way resumes without duplicates. `legacy_imports` holds the runs the
 * REST API starts in the background (status polling); the source DSN is kept without password.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE legacy_import_map (
      tenant_id  uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      system     text NOT NULL,
      kind       text NOT NULL,
      legacy_id  text NOT NULL,
      target_id  uuid NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, system, kind, legacy_id)
    );

    CREATE TABLE legacy_imports (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      source      text NOT NULL,
      dry_run     boolean NOT NULL,
      status      text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed')),
      result      jsonb,
      started_at  timestamptz,
      finished_at timestamptz,
      created_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS legacy_imports, legacy_import_map;');
}
