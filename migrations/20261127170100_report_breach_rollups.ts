import type { Knex } from 'knex';

/**
 * Breach rollups (docs/reports.md "Rollups"): per tenant, UTC hour, team and channel, the number of
 * SLA breach events whose instant (`data->>'at'`) falls in the hour — the total of the breaches
 * list. Kept by the `report-rollup` job on the same dirty hours as the other rollups. Events have
 * no FK to tickets: an event whose ticket is gone counts under the nil team and the empty channel
 * (it counts without a filter, and under no filter, as the live list does).
 *
 * Triggers mark dirty the hour of every breach event written, changed or deleted, and the hours of
 * a ticket's breach events when its team or channel changes. The existing rollups are reset so the
 * job rebuilds every table from the first ticket; until then reports read live.
 */
const BREACH_TYPES = `('ticket.first_response_breached', 'ticket.next_response_breached', 'ticket.sla_breached')`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE report_rollup_breach_hours (
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      hour      timestamptz NOT NULL,
      team_key  uuid NOT NULL,
      channel   text NOT NULL,
      breaches  integer NOT NULL DEFAULT 0,
      PRIMARY KEY (tenant_id, hour, team_key, channel)
    );

    CREATE FUNCTION report_dirty_breach_events() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT e.tenant_id, date_trunc('hour', (e.data->>'at')::timestamptz, 'UTC')
          FROM new_rows e WHERE e.type IN ${BREACH_TYPES} AND e.data->>'at' IS NOT NULL
        ON CONFLICT (tenant_id, hour) DO UPDATE SET marked_at = excluded.marked_at;
      END IF;
      IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT e.tenant_id, date_trunc('hour', (e.data->>'at')::timestamptz, 'UTC')
          FROM old_rows e WHERE e.type IN ${BREACH_TYPES} AND e.data->>'at' IS NOT NULL
        ON CONFLICT (tenant_id, hour) DO UPDATE SET marked_at = excluded.marked_at;
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER report_dirty_breach_events_ins AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_breach_events();
    CREATE TRIGGER report_dirty_breach_events_upd AFTER UPDATE ON events REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_breach_events();
    CREATE TRIGGER report_dirty_breach_events_del AFTER DELETE ON events REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_breach_events();

    CREATE FUNCTION report_dirty_breach_tickets() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO report_rollup_dirty (tenant_id, hour)
      SELECT DISTINCT e.tenant_id, date_trunc('hour', (e.data->>'at')::timestamptz, 'UTC')
        FROM old_rows o JOIN new_rows n ON n.tenant_id = o.tenant_id AND n.id = o.id
        JOIN events e ON e.tenant_id = n.tenant_id AND e.ticket_id = n.id
       WHERE (n.team_id IS DISTINCT FROM o.team_id OR n.channel IS DISTINCT FROM o.channel)
         AND e.type IN ${BREACH_TYPES} AND e.data->>'at' IS NOT NULL
      ON CONFLICT (tenant_id, hour) DO UPDATE SET marked_at = excluded.marked_at;
      RETURN NULL;
    END $$;
    CREATE TRIGGER report_dirty_breach_tickets_upd AFTER UPDATE ON tickets REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_breach_tickets();

    DELETE FROM report_rollup_state;
    DELETE FROM report_rollup_hours;
    DELETE FROM report_rollup_agent_hours;
    DELETE FROM report_rollup_dirty;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER report_dirty_breach_events_ins ON events;
    DROP TRIGGER report_dirty_breach_events_upd ON events;
    DROP TRIGGER report_dirty_breach_events_del ON events;
    DROP TRIGGER report_dirty_breach_tickets_upd ON tickets;
    DROP FUNCTION report_dirty_breach_events();
    DROP FUNCTION report_dirty_breach_tickets();
    DROP TABLE report_rollup_breach_hours;
  `);
}
