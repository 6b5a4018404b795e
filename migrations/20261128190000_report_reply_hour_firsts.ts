import type { Knex } from 'knex';

/**
 * `agent_replies` by local hour of the day and by weekday from rollups (docs/reports.md
 * "Distinct tickets by hour of the day and by weekday").
 *
 * Distinct tickets per local hour of the day over a window is the sum, over the window's UTC hours
 * that fall in that local hour, of the distinct tickets replied to in each, less the (ticket, UTC
 * hour) pairs whose ticket was already counted for the same local hour earlier in the window. The
 * first term is additive; the second concerns only tickets whose replies in the window lie far
 * apart (a day, or a week for weekdays) or straddle an autumn fold, which are few and found from an
 * index.
 *
 * - `report_rollup_hours.reply_hour_tickets`: the public staff replies that are their ticket's
 *   first in their UTC hour (no previous reply, or one before the hour): the distinct tickets
 *   replied to in that hour, for each team and channel.
 * - `report_reply_gaps.first_at`: the instant of the ticket's first public staff reply, and a
 *   partial index over the replies at least 20 hours after it: where a ticket can have been
 *   replied to at the same local hour on another day (a 2-hour DST shift leaves 22 hours between
 *   two such hours' starts).
 * - The resync function keeps `first_at`. A reply's "first in its hour" flag changes only when
 *   another reply of its ticket is written, moved or removed within the same hour, and that write
 *   marks that hour dirty itself (migration 20261127170000): no further mark is needed.
 *
 * The rollups are reset (`rolled_until` dropped): the job rebuilds them with the new column, and
 * until then reports read live — exact all the same.
 */
const resync = (withFirstAt: boolean) => `
    CREATE OR REPLACE FUNCTION report_reply_gaps_resync(tenants uuid[], tickets uuid[]) RETURNS void LANGUAGE sql AS $$
      WITH affected AS (SELECT DISTINCT a.tenant_id, a.ticket_id FROM unnest(tenants, tickets) AS a(tenant_id, ticket_id)),
      want AS (
        SELECT m.tenant_id, m.id AS message_id, m.ticket_id, m.author_id, m.created_at AS at,
               lag(m.created_at) OVER (PARTITION BY m.tenant_id, m.ticket_id ORDER BY m.created_at, m.id) AS prev_at,
               lag(m.created_at) OVER (PARTITION BY m.tenant_id, m.ticket_id, m.author_id ORDER BY m.created_at, m.id) AS prev_author_at${withFirstAt ? `,
               min(m.created_at) OVER (PARTITION BY m.tenant_id, m.ticket_id) AS first_at` : ''}
          FROM affected a JOIN messages m ON m.tenant_id = a.tenant_id AND m.ticket_id = a.ticket_id
         WHERE m.is_agent AND NOT m.is_private
      ),
      cur AS (
        SELECT g.* FROM affected a JOIN report_reply_gaps g ON g.tenant_id = a.tenant_id AND g.ticket_id = a.ticket_id
      ),
      gone AS (
        DELETE FROM report_reply_gaps g USING cur c
         WHERE g.tenant_id = c.tenant_id AND g.message_id = c.message_id
           AND NOT EXISTS (SELECT 1 FROM want w WHERE w.tenant_id = c.tenant_id AND w.message_id = c.message_id)
      ),
      changed AS (
        INSERT INTO report_reply_gaps (tenant_id, message_id, ticket_id, author_id, at, prev_at, prev_author_at${withFirstAt ? ', first_at' : ''})
        SELECT w.tenant_id, w.message_id, w.ticket_id, w.author_id, w.at, w.prev_at, w.prev_author_at${withFirstAt ? ', w.first_at' : ''}
          FROM want w LEFT JOIN cur c ON c.tenant_id = w.tenant_id AND c.message_id = w.message_id
         WHERE (c.ticket_id, c.author_id, c.at, c.prev_at, c.prev_author_at${withFirstAt ? ', c.first_at' : ''})
               IS DISTINCT FROM (w.ticket_id, w.author_id, w.at, w.prev_at, w.prev_author_at${withFirstAt ? ', w.first_at' : ''})
        ON CONFLICT (tenant_id, message_id) DO UPDATE
          SET ticket_id = excluded.ticket_id, author_id = excluded.author_id, at = excluded.at,
              prev_at = excluded.prev_at, prev_author_at = excluded.prev_author_at${withFirstAt ? ', first_at = excluded.first_at' : ''}
      )
      INSERT INTO report_rollup_dirty (tenant_id, hour)
      SELECT DISTINCT w.tenant_id, date_trunc('hour', w.at, 'UTC')
        FROM want w JOIN cur c ON c.tenant_id = w.tenant_id AND c.message_id = w.message_id
       WHERE (w.prev_at IS NULL) <> (c.prev_at IS NULL) OR (w.prev_author_at IS NULL) <> (c.prev_author_at IS NULL);
    $$;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE report_reply_gaps ADD COLUMN first_at timestamptz;
    UPDATE report_reply_gaps g SET first_at = f.first_at
      FROM (SELECT tenant_id, ticket_id, min(at) AS first_at FROM report_reply_gaps GROUP BY tenant_id, ticket_id) f
     WHERE f.tenant_id = g.tenant_id AND f.ticket_id = g.ticket_id;
    ALTER TABLE report_reply_gaps ALTER COLUMN first_at SET NOT NULL;
    CREATE INDEX report_reply_gaps_late ON report_reply_gaps (tenant_id, at) INCLUDE (ticket_id)
      WHERE at - first_at >= interval '20 hours';
    ${resync(true)}

    ALTER TABLE report_rollup_hours ADD COLUMN reply_hour_tickets integer NOT NULL DEFAULT 0;

    DELETE FROM report_rollup_state;
    DELETE FROM report_rollup_hours;
    DELETE FROM report_rollup_agent_hours;
    DELETE FROM report_rollup_dirty;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ${resync(false)}
    DROP INDEX report_reply_gaps_late;
    ALTER TABLE report_reply_gaps DROP COLUMN first_at;
    ALTER TABLE report_rollup_hours DROP COLUMN reply_hour_tickets;
  `);
}
