import type { Knex } from 'knex';
import { appendReplyGap, latestReplyGap, syncFunction } from './20261129140000_report_reply_gaps_append.js';

/**
 * The reports' work on a new message, as one row trigger with a `WHEN` condition.
 *
 * Three statement triggers ran on every INSERT into `messages` (migrations 20261127150000,
 * 20261127170000 and 20261128180000, the last rewritten by 20261129140000): the dirty hour of the
 * reply, the dirty hour of its ticket's creation, and the reply gap. Each call handed the
 * statement's transition table to PL/pgSQL and ran a query over it, only to find, for every
 * customer message and every internal note, that none of the three reads such a message: all of
 * them look at public staff replies alone. Measured in the benchmark, the three were about 0.18 ms
 * of the database's CPU for a ticket created by a customer (1.9 ms in all).
 *
 * A row trigger's `WHEN` is evaluated by the executor before any function is called, and no
 * remaining INSERT trigger references a transition table, so a customer message or a note now runs
 * no report code and captures no transition table. A public staff reply runs one function, once:
 *
 * - its two dirty hours (the reply's own and its ticket's creation), as the two triggers wrote them;
 * - its reply gap, as the append path of migration 20261129140000 wrote it when the reply comes
 *   after every other reply of its ticket by (created_at, id); otherwise the ticket's history is
 *   recomputed (`report_reply_gaps_resync`, as before for any statement it could not append).
 *
 * Several replies inserted by one statement (the legacy import's batches) are handled row by row.
 * AFTER row triggers fire once the statement has inserted all its rows, so each sees every one of
 * them in `messages`: replies in order append one after the other; one that arrives before a reply
 * already written resyncs its ticket from the messages, which already holds the rest. The table
 * ends equal to the gaps computed from scratch either way (test/integration/reports/reply-gaps.test.ts).
 *
 * Updates and deletes keep their statement triggers (rare, and a reply's edit can move it among
 * the others). The functions of the replaced INSERT triggers stay: the UPDATE and DELETE triggers
 * use them, and `down` attaches them again. The reply-gap function, called by updates and deletes
 * alone from now on, goes back to its form without the INSERT-only append path (migration
 * 20261128180000's), which `down` restores.
 */
const REPLACED = [
  ['report_dirty_agent_messages_ins', 'report_dirty_agent_messages'],
  ['report_dirty_messages_ins', 'report_dirty_messages'],
  ['report_reply_gaps_ins', 'report_reply_gaps_sync'],
] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ${REPLACED.map(([trigger]) => `DROP TRIGGER ${trigger} ON messages;`).join('\n    ')}
    ${syncFunction(false)}

    CREATE FUNCTION report_message_row_ins() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      latest record;
    BEGIN
      -- The trigger's WHEN has established that NEW is a public staff reply. Its hour and its
      -- ticket's creation hour are dirty (marks append: migration 20261128170100).
      INSERT INTO report_rollup_dirty (tenant_id, hour)
      SELECT DISTINCT NEW.tenant_id, date_trunc('hour', x.at, 'UTC')
        FROM unnest(ARRAY[NEW.created_at,
                          (SELECT t.created_at FROM tickets t WHERE t.tenant_id = NEW.tenant_id AND t.id = NEW.ticket_id)]) AS x(at)
       WHERE x.at IS NOT NULL;
      -- The ticket's latest reply; NEW is appended after it when it comes later.
${latestReplyGap('NEW', '      ')}
      IF latest.at IS NULL OR (latest.at, latest.message_id) < (NEW.created_at, NEW.id) THEN
${appendReplyGap('NEW', '        ')}
      ELSE
        PERFORM report_reply_gaps_resync(ARRAY[NEW.tenant_id], ARRAY[NEW.ticket_id]);
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER report_message_row_ins AFTER INSERT ON messages FOR EACH ROW
      WHEN (NEW.is_agent AND NOT NEW.is_private)
      EXECUTE FUNCTION report_message_row_ins();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER report_message_row_ins ON messages;
    DROP FUNCTION report_message_row_ins();
    ${syncFunction(true)}
    ${REPLACED.map(([trigger, fn]) => `CREATE TRIGGER ${trigger} AFTER INSERT ON messages REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION ${fn}();`).join('\n    ')}
  `);
}
