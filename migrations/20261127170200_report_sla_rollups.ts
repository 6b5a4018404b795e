import type { Knex } from 'knex';

/**
 * SLA outcome rollups per target (docs/reports.md "Rollups"): per tenant, UTC hour, team, channel
 * and SLA target, the targets decided (met or breached) in the hour and those met on time — the
 * `sla_outcomes` catalog run's parts. Kept by the `report-rollup` job on the same dirty hours; the
 * tickets trigger of 20261127150000 already marks a ticket's outcome hours before and after every
 * change (a team or channel change included), so no trigger is added. The existing rollups are
 * reset so the job rebuilds every table from the first ticket; until then reports read live.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE report_rollup_sla_hours (
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      hour      timestamptz NOT NULL,
      team_key  uuid NOT NULL,
      channel   text NOT NULL,
      target    text NOT NULL,
      decided   integer NOT NULL DEFAULT 0,
      on_time   integer NOT NULL DEFAULT 0,
      PRIMARY KEY (tenant_id, hour, team_key, channel, target)
    );
    DELETE FROM report_rollup_state;
    DELETE FROM report_rollup_hours;
    DELETE FROM report_rollup_agent_hours;
    DELETE FROM report_rollup_breach_hours;
    DELETE FROM report_rollup_dirty;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE report_rollup_sla_hours');
}
