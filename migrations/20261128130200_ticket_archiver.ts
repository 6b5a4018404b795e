import type { Knex } from 'knex';

/**
 * The ticket archiver (CONTRACT §19, archiver module). `archive_runs`: one row per POST
 * /ticket-archiver/run, claimed by the `ticket-archive` job. `archive_batches`: the manifest of one
 * batch of tickets and its state (writing → written → verified → deleted), so a run killed at any
 * point resumes where it stopped and no ticket is archived twice. `archived_tickets`: where each
 * archived ticket now lives, and what reading it needs (who may see it), written in the same
 * transaction that removes the hot rows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE archive_runs (
      tenant_id        uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id               uuid NOT NULL,
      status           text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed')),
      dry_run          boolean NOT NULL,
      older_than_days  integer NOT NULL,
      cutoff           timestamptz NOT NULL,
      tickets          integer NOT NULL DEFAULT 0,
      bytes            bigint NOT NULL DEFAULT 0,
      files            integer NOT NULL DEFAULT 0,
      error            text,
      requested_by     uuid,
      attempts         integer NOT NULL DEFAULT 0,
      created_at       timestamptz NOT NULL,
      started_at       timestamptz,
      finished_at      timestamptz,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX archive_runs_created ON archive_runs (tenant_id, created_at, id);
    CREATE INDEX archive_runs_active ON archive_runs (tenant_id, status) WHERE status IN ('queued', 'running');

    CREATE TABLE archive_batches (
      tenant_id        uuid NOT NULL,
      id               uuid NOT NULL,
      run_id           uuid NOT NULL,
      state            text NOT NULL CHECK (state IN ('writing', 'written', 'verified', 'deleted')),
      ticket_ids       uuid[] NOT NULL,
      -- {ticket id: updated_at} as written: a ticket changed since is written again before deletion.
      versions         jsonb NOT NULL DEFAULT '{}',
      -- [{kind, key, bytes, sha256, rows}]
      files            jsonb NOT NULL DEFAULT '[]',
      bytes            bigint NOT NULL DEFAULT 0,
      created_at       timestamptz NOT NULL,
      updated_at       timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, run_id) REFERENCES archive_runs (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX archive_batches_open ON archive_batches (tenant_id, created_at) WHERE state <> 'deleted';
    CREATE INDEX archive_batches_run ON archive_batches (tenant_id, run_id);

    CREATE TABLE archived_tickets (
      tenant_id        uuid NOT NULL,
      ticket_id        uuid NOT NULL,
      ticket_number    bigint NOT NULL,
      requester_id     uuid NOT NULL,
      organization_id  uuid,
      closed_at        timestamptz,
      batch_id         uuid NOT NULL,
      archived_at      timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, ticket_id),
      FOREIGN KEY (tenant_id, batch_id) REFERENCES archive_batches (tenant_id, id)
    );
    CREATE INDEX archived_tickets_batch ON archived_tickets (tenant_id, batch_id);
    CREATE INDEX archived_tickets_requester ON archived_tickets (tenant_id, requester_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE archived_tickets; DROP TABLE archive_batches; DROP TABLE archive_runs;');
}
