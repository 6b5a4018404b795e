import type { Knex } from 'knex';

/**
 * Agent report rollups (docs/reports.md "Rollups"): per tenant, UTC hour, team, channel and agent,
 * the additive parts of the agents report — tickets created in the hour by current assignee with
 * their first-response and resolution sums, tickets resolved in the hour by assignee, public staff
 * replies in the hour by author, ratings submitted in the hour by the ticket's assignee. Kept by the
 * same `report-rollup` job and the same dirty hours as `report_rollup_hours`.
 *
 * The triggers of 20261127150000 already mark a ticket's creation and resolution hours on every
 * change and its surveys' hours on a team or channel change; the triggers here add what the agent
 * figures need besides: a public staff reply's own hour (before and after), the hours of a ticket's
 * surveys when its assignee changes, and the hours of its public staff replies when its team or
 * channel changes (the replies follow their ticket under a filter).
 *
 * The existing rollups are reset (`rolled_until` dropped): the job rebuilds both tables from the
 * first ticket, and until then reports read live — exact all the same.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE report_rollup_agent_hours (
      tenant_id      uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      hour           timestamptz NOT NULL,
      team_key       uuid NOT NULL,
      channel        text NOT NULL,
      agent_id       uuid NOT NULL,
      created        integer NOT NULL DEFAULT 0,
      frt_sum        numeric NOT NULL DEFAULT 0,
      frt_n          integer NOT NULL DEFAULT 0,
      res_sum        numeric NOT NULL DEFAULT 0,
      res_n          integer NOT NULL DEFAULT 0,
      resolved       integer NOT NULL DEFAULT 0,
      replies        integer NOT NULL DEFAULT 0,
      csat_ratings   integer NOT NULL DEFAULT 0,
      csat_score_sum bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (tenant_id, hour, team_key, channel, agent_id)
    );

    CREATE FUNCTION report_dirty_agent_tickets() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO report_rollup_dirty (tenant_id, hour)
      SELECT DISTINCT c.tenant_id, date_trunc('hour', x.at, 'UTC')
        FROM old_rows o JOIN new_rows n ON n.tenant_id = o.tenant_id AND n.id = o.id
        JOIN csat_surveys c ON c.tenant_id = n.tenant_id AND c.ticket_id = n.id
        CROSS JOIN LATERAL unnest(ARRAY[c.created_at, c.submitted_at]) AS x(at)
       WHERE n.assigned_agent_id IS DISTINCT FROM o.assigned_agent_id AND x.at IS NOT NULL
      ON CONFLICT (tenant_id, hour) DO UPDATE SET marked_at = excluded.marked_at;
      INSERT INTO report_rollup_dirty (tenant_id, hour)
      SELECT DISTINCT m.tenant_id, date_trunc('hour', m.created_at, 'UTC')
        FROM old_rows o JOIN new_rows n ON n.tenant_id = o.tenant_id AND n.id = o.id
        JOIN messages m ON m.tenant_id = n.tenant_id AND m.ticket_id = n.id AND m.is_agent AND NOT m.is_private
       WHERE n.team_id IS DISTINCT FROM o.team_id OR n.channel IS DISTINCT FROM o.channel
      ON CONFLICT (tenant_id, hour) DO UPDATE SET marked_at = excluded.marked_at;
      RETURN NULL;
    END $$;
    CREATE TRIGGER report_dirty_agent_tickets_upd AFTER UPDATE ON tickets REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_agent_tickets();

    CREATE FUNCTION report_dirty_agent_messages() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT m.tenant_id, date_trunc('hour', m.created_at, 'UTC') FROM new_rows m WHERE m.is_agent AND NOT m.is_private
        ON CONFLICT (tenant_id, hour) DO UPDATE SET marked_at = excluded.marked_at;
      END IF;
      IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT m.tenant_id, date_trunc('hour', m.created_at, 'UTC') FROM old_rows m WHERE m.is_agent AND NOT m.is_private
        ON CONFLICT (tenant_id, hour) DO UPDATE SET marked_at = excluded.marked_at;
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER report_dirty_agent_messages_ins AFTER INSERT ON messages REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_agent_messages();
    CREATE TRIGGER report_dirty_agent_messages_upd AFTER UPDATE ON messages REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_agent_messages();
    CREATE TRIGGER report_dirty_agent_messages_del AFTER DELETE ON messages REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_agent_messages();

    DELETE FROM report_rollup_state;
    DELETE FROM report_rollup_hours;
    DELETE FROM report_rollup_dirty;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER report_dirty_agent_tickets_upd ON tickets;
    DROP TRIGGER report_dirty_agent_messages_ins ON messages;
    DROP TRIGGER report_dirty_agent_messages_upd ON messages;
    DROP TRIGGER report_dirty_agent_messages_del ON messages;
    DROP FUNCTION report_dirty_agent_tickets();
    DROP FUNCTION report_dirty_agent_messages();
    DROP TABLE report_rollup_agent_hours;
  `);
}
