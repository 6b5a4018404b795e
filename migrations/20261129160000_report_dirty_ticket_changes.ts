import type { Knex } from 'knex';

/**
 * The reports' ticket trigger marked the hours of every updated ticket dirty (its creation,
 * resolution and SLA outcome hours, before and after), whatever the update changed. A reply
 * updates its ticket (`updated_at`, the SLA clock), so every reply appended marks, and the rollup
 * job recomputed hours in which no figure had moved.
 *
 * An update now marks only the tickets whose report inputs changed: the columns the rollups read
 * from `tickets` (src/reports/rollup.ts, catalog-rollups.ts, reply-buckets.ts, reply-firsts.ts:
 * created_at, resolved_at, first_responded_at, status_id, priority_id, assigned_agent_id, team_id,
 * channel, reopened_count) and the SLA outcomes (`breached_at`, `met_at` of each target). A rollup
 * that comes to read another column of `tickets` must add it here. Inserts and deletes mark as before.
 */
const OUTCOMES = ['first_response', 'next_response', 'resolution'];
const inputs = (alias: string) => [
  ...['created_at', 'resolved_at', 'first_responded_at', 'status_id', 'priority_id', 'assigned_agent_id', 'team_id', 'channel', 'reopened_count']
    .map((column) => `${alias}.${column}`),
  ...OUTCOMES.flatMap((target) => [`${alias}.sla->'${target}'->>'breached_at'`, `${alias}.sla->'${target}'->>'met_at'`]),
].join(', ');
const hours = (alias: string) => `ARRAY[${alias}.created_at, ${alias}.resolved_at,
                 ${OUTCOMES.map((target) => `coalesce(${alias}.sla->'${target}'->>'breached_at', ${alias}.sla->'${target}'->>'met_at')::timestamptz`).join(',\n                 ')}]`;

/** The hours of a ticket's surveys when its team or channel changes, then `end` before the `;`. */
const surveyMarks = (end: string) => `
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT s.tenant_id, date_trunc('hour', s.x, 'UTC') FROM (
          SELECT c.tenant_id, unnest(ARRAY[c.created_at, c.submitted_at]) AS x
            FROM old_rows o JOIN new_rows n ON n.tenant_id = o.tenant_id AND n.id = o.id
            JOIN csat_surveys c ON c.tenant_id = n.tenant_id AND c.ticket_id = n.id
           WHERE n.team_id IS DISTINCT FROM o.team_id OR n.channel IS DISTINCT FROM o.channel) s
         WHERE s.x IS NOT NULL${end};`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION report_dirty_tickets() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT s.tenant_id, date_trunc('hour', s.x, 'UTC')
          FROM (SELECT n.tenant_id, unnest(${hours('n')}) AS x FROM new_rows n) s
         WHERE s.x IS NOT NULL;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT s.tenant_id, date_trunc('hour', s.x, 'UTC')
          FROM (SELECT o.tenant_id, unnest(${hours('o')}) AS x FROM old_rows o) s
         WHERE s.x IS NOT NULL;
      ELSE
        -- The hours before and after of the tickets whose report inputs changed.
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT s.tenant_id, date_trunc('hour', s.x, 'UTC')
          FROM (SELECT n.tenant_id, unnest(${hours('n')} || ${hours('o')}) AS x
                  FROM old_rows o JOIN new_rows n ON n.tenant_id = o.tenant_id AND n.id = o.id
                 WHERE (${inputs('n')}) IS DISTINCT FROM (${inputs('o')})) s
         WHERE s.x IS NOT NULL;
        -- A survey's figures follow its ticket's team and channel.${surveyMarks('')}
      END IF;
      RETURN NULL;
    END $$;
  `);
}

/** The function as migrations 20261127150000 and 20261128170100 left it. */
export async function down(knex: Knex): Promise<void> {
  const mark = '/* marks append: migration 20261128170100 */';
  const rows = (alias: string, from: string) => `
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT s.tenant_id, date_trunc('hour', s.x, 'UTC') FROM (
          SELECT ${alias}.tenant_id, unnest(${hours(alias)}) AS x
            FROM ${from} ${alias}) s
         WHERE s.x IS NOT NULL
        ${mark};`;
  await knex.raw(`
    CREATE OR REPLACE FUNCTION report_dirty_tickets() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP IN ('INSERT', 'UPDATE') THEN${rows('n', 'new_rows')}
      END IF;
      IF TG_OP IN ('UPDATE', 'DELETE') THEN${rows('o', 'old_rows')}
      END IF;
      IF TG_OP = 'UPDATE' THEN${surveyMarks(`\n        ${mark}`)}
      END IF;
      RETURN NULL;
    END $$;
  `);
}
