import type { Knex } from 'knex';

/**
 * The reply-gap trigger (migrations 20261128180000 and 20261129090000) recomputed the whole reply
 * history of every ticket a statement touched, through a SQL function whose plans PostgreSQL does
 * not keep between calls: about 1.5 ms of every public staff reply, the largest part of a reply's
 * database time (docs/performance.md).
 *
 * Almost every reply is written after all the others of its ticket. Appending one changes no
 * existing gap row: its own row is the ticket's latest reply instant (`prev_at`), the author's
 * latest (`prev_author_at`) and the hours of the week before it (`earlier_hours`: the latest row's
 * and that reply's own hour, so the row costs the same on a long conversation), and no hour
 * needs marking (the resync marks only existing rows that change). The trigger now writes that row
 * directly when a statement inserts exactly one public staff reply ordered after every reply of
 * its ticket by (created_at, id), the order of the resync's window; everything else (several
 * replies, a reply written before others, updates, deletes) still goes through the resync. The
 * ticket index of the gaps now orders a ticket's rows, so the latest reply is read, not sorted.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A ticket's rows in reply order: its latest reply is the last entry (the resync's reads of a
    -- ticket's rows use the same index, by its first two columns).
    DROP INDEX report_reply_gaps_ticket;
    CREATE INDEX report_reply_gaps_ticket ON report_reply_gaps (tenant_id, ticket_id, at, message_id);
    ${syncFunction(true)}
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX report_reply_gaps_ticket;
    CREATE INDEX report_reply_gaps_ticket ON report_reply_gaps (tenant_id, ticket_id);
    ${syncFunction(false)}
  `);
}

/**
 * The ticket's latest reply gap into `latest` (the index's last entry of the ticket), for the reply
 * in the PL/pgSQL record `row`; also used by migration 20261204010000. `indent` starts each line.
 */
export function latestReplyGap(row: string, indent: string): string {
  return [
    `SELECT g.at, g.message_id, g.earlier_hours INTO latest FROM report_reply_gaps g`,
    ` WHERE g.tenant_id = ${row}.tenant_id AND g.ticket_id = ${row}.ticket_id`,
    ` ORDER BY g.at DESC, g.message_id DESC LIMIT 1;`,
  ].map((line) => indent + line).join('\n');
}

/**
 * The gap row of the reply in record `row`, appended after `latest` (latestReplyGap): the hours
 * before it are those before the latest reply and the latest reply's hour of the week
 * (report_hour_of_week, written out: a SQL function call here is set up anew in every transaction).
 */
export function appendReplyGap(row: string, indent: string): string {
  return [
    `INSERT INTO report_reply_gaps (tenant_id, message_id, ticket_id, author_id, at, prev_at, prev_author_at, earlier_hours)`,
    `VALUES (${row}.tenant_id, ${row}.id, ${row}.ticket_id, ${row}.author_id, ${row}.created_at, latest.at,`,
    `        (SELECT g.at FROM report_reply_gaps g`,
    `          WHERE g.tenant_id = ${row}.tenant_id AND g.ticket_id = ${row}.ticket_id`,
    `            AND g.author_id IS NOT DISTINCT FROM ${row}.author_id`,
    `          ORDER BY g.at DESC, g.message_id DESC LIMIT 1),`,
    `        CASE WHEN latest.at IS NULL THEN repeat('0', 168)::bit(168)`,
    `             ELSE latest.earlier_hours | set_bit(repeat('0', 168)::bit(168),`,
    `                    mod(floor(extract(epoch FROM latest.at) / 3600)::bigint, 168)::integer, 1) END);`,
  ].map((line) => indent + line).join('\n');
}

/** One public staff reply after every other reply of its ticket: its row, written directly. */
const APPEND_PATH = `      IF TG_OP = 'INSERT' AND cardinality(tickets) = 1 THEN
        SELECT n.tenant_id, n.id, n.ticket_id, n.author_id, n.created_at INTO reply
          FROM new_rows n WHERE n.is_agent AND NOT n.is_private;
        -- The ticket's latest reply (the index's last entry of the ticket).
${latestReplyGap('reply', '        ')}
        IF latest.at IS NULL OR (latest.at, latest.message_id) < (reply.created_at, reply.id) THEN
          -- The hours before the new reply: those before the latest one, and the latest one's hour
          -- of the week (report_hour_of_week, written out: a SQL function call here is set up anew
          -- in every transaction).
${appendReplyGap('reply', '          ')}
          RETURN NULL;
        END IF;
      END IF;
`;

/**
 * The trigger function; without `append`, the earlier one (migration 20261128180000), for `down`
 * and for migration 20261204010000, after which only updates and deletes call it.
 */
export function syncFunction(append: boolean): string {
  return `CREATE OR REPLACE FUNCTION report_reply_gaps_sync() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      tenants uuid[] := '{}';
      tickets uuid[] := '{}';
      more_tenants uuid[];
      more_tickets uuid[];${append ? `
      reply record;
      latest record;` : ''}
    BEGIN
      IF TG_OP IN ('INSERT', 'UPDATE') THEN
        SELECT coalesce(array_agg(n.tenant_id), '{}'), coalesce(array_agg(n.ticket_id), '{}') INTO tenants, tickets
          FROM new_rows n WHERE n.is_agent AND NOT n.is_private;
      END IF;
${append ? APPEND_PATH : ''}      IF TG_OP IN ('UPDATE', 'DELETE') THEN
        SELECT coalesce(array_agg(o.tenant_id), '{}'), coalesce(array_agg(o.ticket_id), '{}') INTO more_tenants, more_tickets
          FROM old_rows o WHERE o.is_agent AND NOT o.is_private;
        tenants := tenants || more_tenants;
        tickets := tickets || more_tickets;
      END IF;
      IF cardinality(tickets) > 0 THEN
        PERFORM report_reply_gaps_resync(tenants, tickets);
      END IF;
      RETURN NULL;
    END $$;`;
}
