import type { Knex } from 'knex';

/**
 * Rollups for the three catalog runs that still read a year of rows live (docs/reports.md
 * "Rollups"): `agent_replies`, `tickets_resolved`, and `tickets_created` by agent.
 *
 * - `report_reply_gaps`: one row per public staff reply with the instant of the ticket's previous
 *   public staff reply (`prev_at`) and of the same author's previous one on the ticket
 *   (`prev_author_at`). "Distinct tickets replied to in [s, e)" is then exact without a distinct
 *   count: the replies in [s, e) with no previous reply (additive, rolled up by hour) plus the
 *   replies in [s, e) whose previous reply is before s — the gaps (prev, at] that contain s, a
 *   GiST probe returning only the conversations under way at s. A statement trigger on messages
 *   recomputes the rows of every ticket a statement touches, in the same transaction, and marks
 *   dirty the hours of replies whose "first" flags changed (a reply inserted or deleted before
 *   them), so the rollups stay exact.
 * - `report_rollup_hours` gains the resolved tickets' resolution-time sum by resolution hour and
 *   the public replies (all, and the tickets' first) by hour; `report_rollup_agent_hours` gains
 *   reopened tickets, that resolution-time sum and the pairs' first replies, and now also keeps
 *   the unassigned tickets and unauthored replies under the nil agent key (no user has it, so the
 *   agents report, which joins users, never shows it).
 *
 * The rollups are reset (`rolled_until` dropped): the job rebuilds them with the new columns, and
 * until then reports read live — exact all the same.
 */
const NIL = '00000000-0000-0000-0000-000000000000';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE EXTENSION IF NOT EXISTS btree_gist;

    CREATE TABLE report_reply_gaps (
      tenant_id      uuid NOT NULL,
      message_id     uuid NOT NULL,
      ticket_id      uuid NOT NULL,
      author_id      uuid,
      at             timestamptz NOT NULL,
      prev_at        timestamptz,
      prev_author_at timestamptz,
      PRIMARY KEY (tenant_id, message_id)
    );
    CREATE INDEX report_reply_gaps_ticket ON report_reply_gaps (tenant_id, ticket_id);
    CREATE INDEX report_reply_gaps_at ON report_reply_gaps (tenant_id, at) INCLUDE (ticket_id, author_id, prev_at, prev_author_at);
    CREATE INDEX report_reply_gaps_span ON report_reply_gaps USING gist (tenant_id, tstzrange(prev_at, at, '(]')) WHERE prev_at IS NOT NULL;
    CREATE INDEX report_reply_gaps_author_span ON report_reply_gaps USING gist (tenant_id, tstzrange(prev_author_at, at, '(]'))
      WHERE prev_author_at IS NOT NULL;

    INSERT INTO report_reply_gaps (tenant_id, message_id, ticket_id, author_id, at, prev_at, prev_author_at)
    SELECT m.tenant_id, m.id, m.ticket_id, m.author_id, m.created_at,
           lag(m.created_at) OVER (PARTITION BY m.tenant_id, m.ticket_id ORDER BY m.created_at, m.id),
           lag(m.created_at) OVER (PARTITION BY m.tenant_id, m.ticket_id, m.author_id ORDER BY m.created_at, m.id)
      FROM messages m WHERE m.is_agent AND NOT m.is_private;

    -- Recomputes the gap rows of the given tickets from their public staff replies; only rows that
    -- differ are written. A reply whose "first" flags change (another reply inserted or removed
    -- before it) has its hour marked dirty: the rollups count first replies by hour. The trigger
    -- below calls it with every ticket a statement touched, before or after.
    CREATE FUNCTION report_reply_gaps_resync(tenants uuid[], tickets uuid[]) RETURNS void LANGUAGE sql AS $$
      WITH affected AS (SELECT DISTINCT a.tenant_id, a.ticket_id FROM unnest(tenants, tickets) AS a(tenant_id, ticket_id)),
      want AS (
        SELECT m.tenant_id, m.id AS message_id, m.ticket_id, m.author_id, m.created_at AS at,
               lag(m.created_at) OVER (PARTITION BY m.tenant_id, m.ticket_id ORDER BY m.created_at, m.id) AS prev_at,
               lag(m.created_at) OVER (PARTITION BY m.tenant_id, m.ticket_id, m.author_id ORDER BY m.created_at, m.id) AS prev_author_at
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
        INSERT INTO report_reply_gaps (tenant_id, message_id, ticket_id, author_id, at, prev_at, prev_author_at)
        SELECT w.tenant_id, w.message_id, w.ticket_id, w.author_id, w.at, w.prev_at, w.prev_author_at
          FROM want w LEFT JOIN cur c ON c.tenant_id = w.tenant_id AND c.message_id = w.message_id
         WHERE (c.ticket_id, c.author_id, c.at, c.prev_at, c.prev_author_at)
               IS DISTINCT FROM (w.ticket_id, w.author_id, w.at, w.prev_at, w.prev_author_at)
        ON CONFLICT (tenant_id, message_id) DO UPDATE
          SET ticket_id = excluded.ticket_id, author_id = excluded.author_id, at = excluded.at,
              prev_at = excluded.prev_at, prev_author_at = excluded.prev_author_at
      )
      INSERT INTO report_rollup_dirty (tenant_id, hour)
      SELECT DISTINCT w.tenant_id, date_trunc('hour', w.at, 'UTC')
        FROM want w JOIN cur c ON c.tenant_id = w.tenant_id AND c.message_id = w.message_id
       WHERE (w.prev_at IS NULL) <> (c.prev_at IS NULL) OR (w.prev_author_at IS NULL) <> (c.prev_author_at IS NULL);
    $$;
    CREATE FUNCTION report_reply_gaps_sync() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      tenants uuid[] := '{}';
      tickets uuid[] := '{}';
      more_tenants uuid[];
      more_tickets uuid[];
    BEGIN
      IF TG_OP IN ('INSERT', 'UPDATE') THEN
        SELECT coalesce(array_agg(n.tenant_id), '{}'), coalesce(array_agg(n.ticket_id), '{}') INTO tenants, tickets
          FROM new_rows n WHERE n.is_agent AND NOT n.is_private;
      END IF;
      IF TG_OP IN ('UPDATE', 'DELETE') THEN
        SELECT coalesce(array_agg(o.tenant_id), '{}'), coalesce(array_agg(o.ticket_id), '{}') INTO more_tenants, more_tickets
          FROM old_rows o WHERE o.is_agent AND NOT o.is_private;
        tenants := tenants || more_tenants;
        tickets := tickets || more_tickets;
      END IF;
      IF cardinality(tickets) > 0 THEN
        PERFORM report_reply_gaps_resync(tenants, tickets);
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER report_reply_gaps_ins AFTER INSERT ON messages REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_reply_gaps_sync();
    CREATE TRIGGER report_reply_gaps_upd AFTER UPDATE ON messages REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_reply_gaps_sync();
    CREATE TRIGGER report_reply_gaps_del AFTER DELETE ON messages REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_reply_gaps_sync();

    ALTER TABLE report_rollup_hours
      ADD COLUMN resolved_res_sum numeric NOT NULL DEFAULT 0,
      ADD COLUMN replies integer NOT NULL DEFAULT 0,
      ADD COLUMN reply_tickets integer NOT NULL DEFAULT 0;
    ALTER TABLE report_rollup_agent_hours
      ADD COLUMN reopened integer NOT NULL DEFAULT 0,
      ADD COLUMN resolved_res_sum numeric NOT NULL DEFAULT 0,
      ADD COLUMN reply_tickets integer NOT NULL DEFAULT 0;
    COMMENT ON COLUMN report_rollup_agent_hours.agent_id IS 'The assignee or reply author; ${NIL} for none';

    DELETE FROM report_rollup_state;
    DELETE FROM report_rollup_hours;
    DELETE FROM report_rollup_agent_hours;
    DELETE FROM report_rollup_dirty;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER report_reply_gaps_ins ON messages;
    DROP TRIGGER report_reply_gaps_upd ON messages;
    DROP TRIGGER report_reply_gaps_del ON messages;
    DROP FUNCTION report_reply_gaps_sync();
    DROP FUNCTION report_reply_gaps_resync(uuid[], uuid[]);
    DROP TABLE report_reply_gaps;
    DELETE FROM report_rollup_agent_hours WHERE agent_id = '${NIL}';
    ALTER TABLE report_rollup_hours DROP COLUMN resolved_res_sum, DROP COLUMN replies, DROP COLUMN reply_tickets;
    ALTER TABLE report_rollup_agent_hours DROP COLUMN reopened, DROP COLUMN resolved_res_sum, DROP COLUMN reply_tickets;
    COMMENT ON COLUMN report_rollup_agent_hours.agent_id IS NULL;
  `);
}
