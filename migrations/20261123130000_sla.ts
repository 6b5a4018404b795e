import type { Knex } from 'knex';

/**
 * SLA configuration (CONTRACT §4, §11; SPEC "SLA policy", "Ticket-type SLA override", "Business
 * hours", "Holiday") and the ticket's SLA bookkeeping.
 *
 * No rows are created with a tenant: an absent `business_hours` row means the default (Monday to
 * Friday 09:00–17:00 UTC) and an absent `sla_policies` row means the SPEC's default matrix for
 * that priority's key (src/sla/defaults.ts). So every tenant, old or new, has the defaults without
 * a backfill, and "restore the default" is simply deleting a row.
 *
 * tickets.sla_state keeps what the engine needs to replay the ticket (its SLA-relevant history and
 * the policy fixed at creation); tickets.sla_next_at is the next instant at which a warning or a
 * breach falls due, indexed so the escalation job reads only due tickets, never the whole table.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE business_hours (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      timezone    text NOT NULL,
      schedule    jsonb NOT NULL CHECK (jsonb_typeof(schedule) = 'object'),
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id)
    );

    -- A holiday closes its whole local day (business-hours timezone); recurring ones every year.
    CREATE TABLE holidays (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      name        text NOT NULL,
      date        date NOT NULL,
      recurring   boolean NOT NULL DEFAULT false,
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX holidays_date ON holidays (tenant_id, date);

    CREATE TABLE sla_policies (
      tenant_id                    uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      priority_id                  uuid NOT NULL,
      first_response_time_minutes  integer NOT NULL CHECK (first_response_time_minutes > 0),
      next_response_time_minutes   integer NOT NULL CHECK (next_response_time_minutes > 0),
      resolution_time_minutes      integer NOT NULL CHECK (resolution_time_minutes > 0),
      respect_business_hours       boolean NOT NULL,
      warn_percent                 integer NOT NULL DEFAULT 80 CHECK (warn_percent BETWEEN 1 AND 100),
      created_at                   timestamptz NOT NULL,
      updated_at                   timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, priority_id),
      FOREIGN KEY (tenant_id, priority_id) REFERENCES priorities (tenant_id, id) ON DELETE CASCADE
    );

    -- Null fields keep the priority policy's value.
    CREATE TABLE sla_type_overrides (
      tenant_id               uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      type_id                 uuid NOT NULL,
      priority_id             uuid NOT NULL,
      resolve_hours           integer CHECK (resolve_hours > 0),
      first_response_minutes  integer CHECK (first_response_minutes > 0),
      next_response_minutes   integer CHECK (next_response_minutes > 0),
      warn_percent            integer CHECK (warn_percent BETWEEN 1 AND 100),
      created_at              timestamptz NOT NULL,
      updated_at              timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, type_id, priority_id),
      FOREIGN KEY (tenant_id, type_id) REFERENCES ticket_types (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, priority_id) REFERENCES priorities (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX sla_type_overrides_priority ON sla_type_overrides (tenant_id, priority_id);

    ALTER TABLE tickets
      ADD COLUMN sla_state jsonb,
      ADD COLUMN sla_next_at timestamptz;
    -- Across tenants on purpose: the escalation job claims due tickets of every tenant.
    CREATE INDEX tickets_sla_next_at ON tickets (sla_next_at) WHERE sla_next_at IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS tickets_sla_next_at;
    ALTER TABLE tickets DROP COLUMN IF EXISTS sla_state, DROP COLUMN IF EXISTS sla_next_at;
    DROP TABLE IF EXISTS sla_type_overrides, sla_policies, holidays, business_hours;
  `);
}
