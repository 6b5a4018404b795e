import type { Knex } from 'knex';

/**
 * Rollups for the catalog runs by priority and by current status, and `sla_outcomes` by agent
 * (docs/reports.md "Rollups").
 *
 * - `report_rollup_attr_hours`: per tenant, UTC hour and ticket attribute (`priority` or `status`,
 *   and its value; the nil uuid for none), the additive parts of every catalog report: tickets
 *   created (with their response and resolution sums and reopened count), tickets resolved (with
 *   the resolution-time sum), SLA targets decided and on time, ratings and their score sum, public
 *   staff replies and the tickets' first ones. Status rows carry the created parts only (only
 *   `tickets_created` has a status dimension). No team or channel key: the table answers runs
 *   without a filter; a filtered run reads a fifth or a quarter of the rows live.
 * - `report_rollup_agent_hours` gains the SLA targets decided in the hour and those on time, by
 *   the ticket's assignee.
 *
 * Dirty hours: any ticket update already marks its creation, resolution and SLA outcome hours (a
 * priority, status or assignee change included). What the priority adds: a change of it marks the
 * hours of the ticket's ratings and public staff replies, whose figures follow the ticket.
 *
 * The rollups are reset (`rolled_until` dropped): the job rebuilds them, and until then reports
 * read live — exact all the same.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE report_rollup_attr_hours (
      tenant_id        uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      hour             timestamptz NOT NULL,
      attr             text NOT NULL CHECK (attr IN ('priority', 'status')),
      attr_key         uuid NOT NULL,
      created          integer NOT NULL DEFAULT 0,
      frt_sum          numeric NOT NULL DEFAULT 0,
      frt_n            integer NOT NULL DEFAULT 0,
      res_sum          numeric NOT NULL DEFAULT 0,
      res_n            integer NOT NULL DEFAULT 0,
      reopened         integer NOT NULL DEFAULT 0,
      resolved         integer NOT NULL DEFAULT 0,
      resolved_res_sum numeric NOT NULL DEFAULT 0,
      sla_decided      integer NOT NULL DEFAULT 0,
      sla_on_time      integer NOT NULL DEFAULT 0,
      csat_ratings     integer NOT NULL DEFAULT 0,
      csat_score_sum   bigint NOT NULL DEFAULT 0,
      replies          integer NOT NULL DEFAULT 0,
      reply_tickets    integer NOT NULL DEFAULT 0,
      PRIMARY KEY (tenant_id, hour, attr, attr_key)
    );
    ALTER TABLE report_rollup_agent_hours
      ADD COLUMN sla_decided integer NOT NULL DEFAULT 0,
      ADD COLUMN sla_on_time integer NOT NULL DEFAULT 0;

    CREATE FUNCTION report_dirty_ticket_priority() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO report_rollup_dirty (tenant_id, hour)
      SELECT DISTINCT x.tenant_id, date_trunc('hour', x.at, 'UTC') FROM (
        SELECT c.tenant_id, unnest(ARRAY[c.created_at, c.submitted_at]) AS at
          FROM old_rows o JOIN new_rows n ON n.tenant_id = o.tenant_id AND n.id = o.id
          JOIN csat_surveys c ON c.tenant_id = n.tenant_id AND c.ticket_id = n.id
         WHERE n.priority_id IS DISTINCT FROM o.priority_id
        UNION ALL
        SELECT g.tenant_id, g.at
          FROM old_rows o JOIN new_rows n ON n.tenant_id = o.tenant_id AND n.id = o.id
          JOIN report_reply_gaps g ON g.tenant_id = n.tenant_id AND g.ticket_id = n.id
         WHERE n.priority_id IS DISTINCT FROM o.priority_id) x
       WHERE x.at IS NOT NULL;
      RETURN NULL;
    END $$;
    CREATE TRIGGER report_dirty_ticket_priority_upd AFTER UPDATE ON tickets REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_ticket_priority();

    DELETE FROM report_rollup_state;
    DELETE FROM report_rollup_hours;
    DELETE FROM report_rollup_agent_hours;
    DELETE FROM report_rollup_dirty;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER report_dirty_ticket_priority_upd ON tickets;
    DROP FUNCTION report_dirty_ticket_priority();
    ALTER TABLE report_rollup_agent_hours DROP COLUMN sla_decided, DROP COLUMN sla_on_time;
    DROP TABLE report_rollup_attr_hours;
  `);
}
