import type { Knex } from 'knex';

/**
 * Hourly report rollups (docs/reports.md "Rollups"): per tenant, UTC hour, team and channel, the
 * additive parts of the overview figures. Kept by the `report-rollup` job; exact at read time
 * because every hour that a later change touches is marked dirty in that change's own transaction
 * (statement triggers below, so every write path counts: the API, jobs, imports, FK actions), and
 * reads take dirty hours, hours not rolled up yet and partial edge hours live from the base tables.
 *
 * - `report_rollup_hours`: the figures; `team_key` is the ticket's team or the nil uuid.
 * - `report_rollup_state`: per tenant, `rolled_until` — every hour before it has been rolled up.
 * - `report_rollup_dirty`: hours (UTC) whose rollup may be stale; the job recomputes and clears them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE report_rollup_hours (
      tenant_id      uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      hour           timestamptz NOT NULL,
      team_key       uuid NOT NULL,
      channel        text NOT NULL,
      created        integer NOT NULL DEFAULT 0,
      frt_sum        numeric NOT NULL DEFAULT 0,
      frt_n          integer NOT NULL DEFAULT 0,
      res_sum        numeric NOT NULL DEFAULT 0,
      res_n          integer NOT NULL DEFAULT 0,
      reopened       integer NOT NULL DEFAULT 0,
      ever_resolved  integer NOT NULL DEFAULT 0,
      one_touch      integer NOT NULL DEFAULT 0,
      resolved       integer NOT NULL DEFAULT 0,
      sla_on_time    integer NOT NULL DEFAULT 0,
      sla_decided    integer NOT NULL DEFAULT 0,
      csat_ratings   integer NOT NULL DEFAULT 0,
      csat_score_sum bigint NOT NULL DEFAULT 0,
      csat_sent      integer NOT NULL DEFAULT 0,
      csat_answered  integer NOT NULL DEFAULT 0,
      PRIMARY KEY (tenant_id, hour, team_key, channel)
    );
    CREATE TABLE report_rollup_state (
      tenant_id    uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
      rolled_until timestamptz NOT NULL
    );
    -- No FK to tenants: a tenant's deletion cascades into tickets, whose triggers mark hours here.
    CREATE TABLE report_rollup_dirty (
      tenant_id uuid NOT NULL,
      hour      timestamptz NOT NULL,
      marked_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (tenant_id, hour)
    );

    -- Tickets: the hours of created_at, resolved_at and each SLA outcome, before and after; when the
    -- team or channel changes, also the hours of the ticket's surveys (their figures follow the ticket).
    CREATE FUNCTION report_dirty_tickets() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT s.tenant_id, date_trunc('hour', s.x, 'UTC') FROM (
          SELECT n.tenant_id, unnest(ARRAY[n.created_at, n.resolved_at,
                   coalesce(n.sla->'first_response'->>'breached_at', n.sla->'first_response'->>'met_at')::timestamptz,
                   coalesce(n.sla->'next_response'->>'breached_at', n.sla->'next_response'->>'met_at')::timestamptz,
                   coalesce(n.sla->'resolution'->>'breached_at', n.sla->'resolution'->>'met_at')::timestamptz]) AS x
            FROM new_rows n) s
         WHERE s.x IS NOT NULL
        ON CONFLICT (tenant_id, hour) DO UPDATE SET marked_at = excluded.marked_at;
      END IF;
      IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT s.tenant_id, date_trunc('hour', s.x, 'UTC') FROM (
          SELECT o.tenant_id, unnest(ARRAY[o.created_at, o.resolved_at,
                   coalesce(o.sla->'first_response'->>'breached_at', o.sla->'first_response'->>'met_at')::timestamptz,
                   coalesce(o.sla->'next_response'->>'breached_at', o.sla->'next_response'->>'met_at')::timestamptz,
                   coalesce(o.sla->'resolution'->>'breached_at', o.sla->'resolution'->>'met_at')::timestamptz]) AS x
            FROM old_rows o) s
         WHERE s.x IS NOT NULL
        ON CONFLICT (tenant_id, hour) DO UPDATE SET marked_at = excluded.marked_at;
      END IF;
      IF TG_OP = 'UPDATE' THEN
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT s.tenant_id, date_trunc('hour', s.x, 'UTC') FROM (
          SELECT c.tenant_id, unnest(ARRAY[c.created_at, c.submitted_at]) AS x
            FROM old_rows o JOIN new_rows n ON n.tenant_id = o.tenant_id AND n.id = o.id
            JOIN csat_surveys c ON c.tenant_id = n.tenant_id AND c.ticket_id = n.id
           WHERE n.team_id IS DISTINCT FROM o.team_id OR n.channel IS DISTINCT FROM o.channel) s
         WHERE s.x IS NOT NULL
        ON CONFLICT (tenant_id, hour) DO UPDATE SET marked_at = excluded.marked_at;
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER report_dirty_tickets_ins AFTER INSERT ON tickets REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_tickets();
    CREATE TRIGGER report_dirty_tickets_upd AFTER UPDATE ON tickets REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_tickets();
    CREATE TRIGGER report_dirty_tickets_del AFTER DELETE ON tickets REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_tickets();

    -- Public staff messages decide the one-touch figure of their ticket's creation hour.
    CREATE FUNCTION report_dirty_messages() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT t.tenant_id, date_trunc('hour', t.created_at, 'UTC')
          FROM new_rows m JOIN tickets t ON t.tenant_id = m.tenant_id AND t.id = m.ticket_id
         WHERE m.is_agent AND NOT m.is_private
        ON CONFLICT (tenant_id, hour) DO UPDATE SET marked_at = excluded.marked_at;
      END IF;
      IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT t.tenant_id, date_trunc('hour', t.created_at, 'UTC')
          FROM old_rows m JOIN tickets t ON t.tenant_id = m.tenant_id AND t.id = m.ticket_id
         WHERE m.is_agent AND NOT m.is_private
        ON CONFLICT (tenant_id, hour) DO UPDATE SET marked_at = excluded.marked_at;
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER report_dirty_messages_ins AFTER INSERT ON messages REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_messages();
    CREATE TRIGGER report_dirty_messages_upd AFTER UPDATE ON messages REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_messages();
    CREATE TRIGGER report_dirty_messages_del AFTER DELETE ON messages REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_messages();

    -- CSAT surveys: the hours they were sent and rated, before and after.
    CREATE FUNCTION report_dirty_csat() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT s.tenant_id, date_trunc('hour', s.x, 'UTC')
          FROM (SELECT n.tenant_id, unnest(ARRAY[n.created_at, n.submitted_at]) AS x FROM new_rows n) s
         WHERE s.x IS NOT NULL
        ON CONFLICT (tenant_id, hour) DO UPDATE SET marked_at = excluded.marked_at;
      END IF;
      IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT s.tenant_id, date_trunc('hour', s.x, 'UTC')
          FROM (SELECT o.tenant_id, unnest(ARRAY[o.created_at, o.submitted_at]) AS x FROM old_rows o) s
         WHERE s.x IS NOT NULL
        ON CONFLICT (tenant_id, hour) DO UPDATE SET marked_at = excluded.marked_at;
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER report_dirty_csat_ins AFTER INSERT ON csat_surveys REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_csat();
    CREATE TRIGGER report_dirty_csat_upd AFTER UPDATE ON csat_surveys REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_csat();
    CREATE TRIGGER report_dirty_csat_del AFTER DELETE ON csat_surveys REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_csat();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER report_dirty_tickets_ins ON tickets;
    DROP TRIGGER report_dirty_tickets_upd ON tickets;
    DROP TRIGGER report_dirty_tickets_del ON tickets;
    DROP TRIGGER report_dirty_messages_ins ON messages;
    DROP TRIGGER report_dirty_messages_upd ON messages;
    DROP TRIGGER report_dirty_messages_del ON messages;
    DROP TRIGGER report_dirty_csat_ins ON csat_surveys;
    DROP TRIGGER report_dirty_csat_upd ON csat_surveys;
    DROP TRIGGER report_dirty_csat_del ON csat_surveys;
    DROP FUNCTION report_dirty_tickets();
    DROP FUNCTION report_dirty_messages();
    DROP FUNCTION report_dirty_csat();
    DROP TABLE report_rollup_dirty;
    DROP TABLE report_rollup_state;
    DROP TABLE report_rollup_hours;
  `);
}
