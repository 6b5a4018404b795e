import type { Knex } from 'knex';

/**
 * Rollups for `agent_replies` by local day, local hour of the day and local weekday
 * (docs/reports.md "Distinct tickets by day, hour and weekday"): the distinct tickets replied to
 * in each bucket, which no hourly count answers by itself.
 *
 * - `report_reply_gaps.earlier_hours`: the hours of the week (UTC hours since the epoch, modulo
 *   168) at which the ticket had public staff replies before this one. With `prev_at` it tells,
 *   per reply and for any local day start a whole number of hours before its hour, whether the
 *   reply is its ticket's first of the day, of the (UTC) hour of the day, and of the weekday.
 * - `report_rollup_reply_hours`, one row per (tenant, UTC hour, team, channel): the public staff
 *   replies of the hour and, for each j = 0..25 hours from a local day's start to the hour, how
 *   many of them are first of their day (`day_firsts[j + 1]`) and of their weekday
 *   (`wday_firsts[j + 1]`), and how many are first of their UTC hour of the day (`hour_firsts`).
 *   `report_rollup_reply_totals` holds the same per hour over every team and channel, the day
 *   flags as the first entries of the week flags (first since a start 0..169 hours before).
 * - The reply-gap trigger now also keeps `earlier_hours`, and marks dirty the hour of every reply
 *   whose `prev_at` or `earlier_hours` changes (a reply inserted or deleted before it).
 *
 * The rollups are reset (`rolled_until` dropped): the job rebuilds every table, this one included,
 * and until then reports read live, exact all the same.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The hour of the week of an instant: UTC hours since the epoch, modulo 168 (a week's hours).
    CREATE FUNCTION report_hour_of_week(at timestamptz) RETURNS integer
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT mod(floor(extract(epoch FROM at) / 3600)::bigint, 168)::integer $$;
    -- One bit set: the instant's hour of the week (bit 0 is the leftmost).
    CREATE FUNCTION report_hour_bit(at timestamptz) RETURNS bit(168)
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT set_bit(repeat('0', 168)::bit(168), report_hour_of_week(at), 1)::bit(168) $$;
    -- Whether no bit is set in the len hours of the week from start on (wrapping round the week).
    CREATE FUNCTION report_hours_clear(hours bit(168), start integer, len integer) RETURNS boolean
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT bit_count(substring(hours || hours FROM start + 1 FOR len)) = 0 $$;
    -- Whether no bit is set at the given UTC hour of the day, on any of the week's seven days.
    CREATE FUNCTION report_hour_of_day_clear(hours bit(168), hour integer) RETURNS boolean
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT get_bit(hours, hour) + get_bit(hours, hour + 24) + get_bit(hours, hour + 48) + get_bit(hours, hour + 72)
                 + get_bit(hours, hour + 96) + get_bit(hours, hour + 120) + get_bit(hours, hour + 144) = 0 $$;

    ALTER TABLE report_reply_gaps ADD COLUMN earlier_hours bit(168) NOT NULL DEFAULT repeat('0', 168)::bit(168);
    UPDATE report_reply_gaps g SET earlier_hours = w.earlier_hours
      FROM (SELECT tenant_id, message_id,
                   bit_or(report_hour_bit(at)) OVER (PARTITION BY tenant_id, ticket_id ORDER BY at, message_id
                                                     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS earlier_hours
              FROM report_reply_gaps) w
     WHERE g.tenant_id = w.tenant_id AND g.message_id = w.message_id AND w.earlier_hours IS NOT NULL;

    -- As before (20261128180000), plus earlier_hours, and the hour of every reply whose prev_at or
    -- earlier_hours changes is marked dirty: the reply rollups count first replies by both.
    ${resyncFunction(true)}

    CREATE TABLE report_rollup_reply_hours (
      tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      hour        timestamptz NOT NULL,
      team_key    uuid NOT NULL,
      channel     text NOT NULL,
      replies     integer NOT NULL,
      day_firsts  integer[] NOT NULL,
      hour_firsts integer NOT NULL,
      wday_firsts integer[] NOT NULL,
      PRIMARY KEY (tenant_id, hour, team_key, channel)
    );
    -- The same per hour over every team and channel, for runs without a filter (a year is 8,760
    -- rows here, sixteen times as many above). week_firsts[j + 1] counts the replies first since a
    -- start j = 0..169 hours before the hour: a week's start, or a day's (its first 26 entries are
    -- day_firsts, so the totals keep no day_firsts of their own).
    CREATE TABLE report_rollup_reply_totals (
      tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      hour        timestamptz NOT NULL,
      replies     integer NOT NULL,
      hour_firsts integer NOT NULL,
      wday_firsts integer[] NOT NULL,
      week_firsts integer[] NOT NULL,
      PRIMARY KEY (tenant_id, hour)
    );

    DELETE FROM report_rollup_state;
    DELETE FROM report_rollup_dirty;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE report_rollup_reply_totals;
    DROP TABLE report_rollup_reply_hours;
    ${resyncFunction(false)}
    ALTER TABLE report_reply_gaps DROP COLUMN earlier_hours;
    DROP FUNCTION report_hour_of_day_clear(bit(168), integer);
    DROP FUNCTION report_hours_clear(bit(168), integer, integer);
    DROP FUNCTION report_hour_bit(timestamptz);
    DROP FUNCTION report_hour_of_week(timestamptz);
  `);
}

/**
 * The reply-gap resync (migration 20261128180000): recomputes the gap rows of the given tickets
 * from their public staff replies, writes only the rows that differ, and marks dirty the hours of
 * replies whose flags changed. With `hours`, it also keeps `earlier_hours` and marks every change
 * of `prev_at` or `earlier_hours`; without, it is the earlier migration's function (for `down`).
 */
function resyncFunction(hours: boolean): string {
  const col = hours ? ', earlier_hours' : '';
  const w = (alias: string) => (hours ? `, ${alias}.earlier_hours` : '');
  return `CREATE OR REPLACE FUNCTION report_reply_gaps_resync(tenants uuid[], tickets uuid[]) RETURNS void LANGUAGE sql AS $$
      WITH affected AS (SELECT DISTINCT a.tenant_id, a.ticket_id FROM unnest(tenants, tickets) AS a(tenant_id, ticket_id)),
      want AS (
        SELECT m.tenant_id, m.id AS message_id, m.ticket_id, m.author_id, m.created_at AS at,
               lag(m.created_at) OVER (PARTITION BY m.tenant_id, m.ticket_id ORDER BY m.created_at, m.id) AS prev_at,
               lag(m.created_at) OVER (PARTITION BY m.tenant_id, m.ticket_id, m.author_id ORDER BY m.created_at, m.id) AS prev_author_at${hours ? `,
               coalesce(bit_or(report_hour_bit(m.created_at)) OVER (PARTITION BY m.tenant_id, m.ticket_id ORDER BY m.created_at, m.id
                                                                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
                        repeat('0', 168)::bit(168)) AS earlier_hours` : ''}
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
        INSERT INTO report_reply_gaps (tenant_id, message_id, ticket_id, author_id, at, prev_at, prev_author_at${col})
        SELECT w.tenant_id, w.message_id, w.ticket_id, w.author_id, w.at, w.prev_at, w.prev_author_at${w('w')}
          FROM want w LEFT JOIN cur c ON c.tenant_id = w.tenant_id AND c.message_id = w.message_id
         WHERE (c.ticket_id, c.author_id, c.at, c.prev_at, c.prev_author_at${w('c')})
               IS DISTINCT FROM (w.ticket_id, w.author_id, w.at, w.prev_at, w.prev_author_at${w('w')})
        ON CONFLICT (tenant_id, message_id) DO UPDATE
          SET ticket_id = excluded.ticket_id, author_id = excluded.author_id, at = excluded.at,
              prev_at = excluded.prev_at, prev_author_at = excluded.prev_author_at${hours ? ', earlier_hours = excluded.earlier_hours' : ''}
      )
      INSERT INTO report_rollup_dirty (tenant_id, hour)
      SELECT DISTINCT w.tenant_id, date_trunc('hour', w.at, 'UTC')
        FROM want w JOIN cur c ON c.tenant_id = w.tenant_id AND c.message_id = w.message_id
       WHERE ${hours ? 'w.prev_at IS DISTINCT FROM c.prev_at OR w.earlier_hours <> c.earlier_hours' : '(w.prev_at IS NULL) <> (c.prev_at IS NULL)'}
          OR (w.prev_author_at IS NULL) <> (c.prev_author_at IS NULL);
    $$;`;
}
