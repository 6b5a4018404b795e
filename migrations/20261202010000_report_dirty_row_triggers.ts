import type { Knex } from 'knex';

/**
 * The reports' marks for ticket updates and new events, as row triggers with a `WHEN` condition.
 *
 * Four statement triggers ran on every UPDATE of `tickets` (migrations 20261127150000,
 * 20261127170100, 20261128180100 and 20261129160000), and one on every INSERT into `events`. Each
 * call hands its transition tables to PL/pgSQL, which plans its queries over them anew, only to
 * find, for almost every write, that nothing a report reads had changed: a reply's UPDATE moves
 * `updated_at` and the SLA clock's bookkeeping, and almost no event is a breach. Measured inside
 * the server, those four triggers were 0.1–0.2 ms of an UPDATE that otherwise took 0.25–0.3 ms.
 *
 * A row trigger's `WHEN` condition is evaluated by the executor before any function is called, so
 * an update that changes no report input, and an event that is no breach, now run no trigger code
 * at all. The marks are the ones the statement triggers wrote, row by row:
 *
 * - any report input changed: the ticket's hours before and after (creation, resolution, SLA
 *   outcomes), as migration 20261129160000 defines the inputs;
 * - team, channel, assignee or priority changed: the hours of the ticket's CSAT surveys;
 * - team or channel changed: the hours of its public staff replies and of its breach events;
 * - priority changed: the hours of its reply gaps.
 *
 * Inserts and deletes of tickets, and updates and deletes of events, keep their statement triggers
 * (an import inserts tickets by the thousand; the others are rare). The functions of the replaced
 * statement triggers stay, unused, for `down` to attach them again.
 */
const OUTCOMES = ['first_response', 'next_response', 'resolution'];
const BREACH_TYPES = `('ticket.first_response_breached', 'ticket.next_response_breached', 'ticket.sla_breached')`;
const inputs = (row: string) => [
  ...['created_at', 'resolved_at', 'first_responded_at', 'status_id', 'priority_id', 'assigned_agent_id', 'team_id', 'channel', 'reopened_count']
    .map((column) => `${row}.${column}`),
  ...OUTCOMES.flatMap((target) => [`${row}.sla->'${target}'->>'breached_at'`, `${row}.sla->'${target}'->>'met_at'`]),
].join(', ');
const hours = (row: string) => `ARRAY[${row}.created_at, ${row}.resolved_at, ${OUTCOMES
  .map((target) => `coalesce(${row}.sla->'${target}'->>'breached_at', ${row}.sla->'${target}'->>'met_at')::timestamptz`).join(', ')}]`;
const changed = (...columns: string[]) => columns.map((c) => `NEW.${c} IS DISTINCT FROM OLD.${c}`).join(' OR ');

const STATEMENT_TRIGGERS = [
  ['tickets', 'report_dirty_tickets_upd', 'report_dirty_tickets'],
  ['tickets', 'report_dirty_agent_tickets_upd', 'report_dirty_agent_tickets'],
  ['tickets', 'report_dirty_ticket_priority_upd', 'report_dirty_ticket_priority'],
  ['tickets', 'report_dirty_breach_tickets_upd', 'report_dirty_breach_tickets'],
] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ${STATEMENT_TRIGGERS.map(([table, trigger]) => `DROP TRIGGER ${trigger} ON ${table};`).join('\n    ')}
    DROP TRIGGER report_dirty_breach_events_ins ON events;

    CREATE FUNCTION report_dirty_ticket_row() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- The trigger's WHEN has established that a report input changed.
      INSERT INTO report_rollup_dirty (tenant_id, hour)
      SELECT DISTINCT NEW.tenant_id, date_trunc('hour', x.at, 'UTC')
        FROM unnest(${hours('NEW')} || ${hours('OLD')}) AS x(at) WHERE x.at IS NOT NULL;
      IF ${changed('team_id', 'channel', 'assigned_agent_id', 'priority_id')} THEN
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT c.tenant_id, date_trunc('hour', x.at, 'UTC')
          FROM csat_surveys c CROSS JOIN LATERAL unnest(ARRAY[c.created_at, c.submitted_at]) AS x(at)
         WHERE c.tenant_id = NEW.tenant_id AND c.ticket_id = NEW.id AND x.at IS NOT NULL;
      END IF;
      IF ${changed('team_id', 'channel')} THEN
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT m.tenant_id, date_trunc('hour', m.created_at, 'UTC') FROM messages m
         WHERE m.tenant_id = NEW.tenant_id AND m.ticket_id = NEW.id AND m.is_agent AND NOT m.is_private;
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT e.tenant_id, date_trunc('hour', (e.data->>'at')::timestamptz, 'UTC') FROM events e
         WHERE e.tenant_id = NEW.tenant_id AND e.ticket_id = NEW.id AND e.type IN ${BREACH_TYPES} AND e.data->>'at' IS NOT NULL;
      END IF;
      IF ${changed('priority_id')} THEN
        INSERT INTO report_rollup_dirty (tenant_id, hour)
        SELECT DISTINCT g.tenant_id, date_trunc('hour', g.at, 'UTC') FROM report_reply_gaps g
         WHERE g.tenant_id = NEW.tenant_id AND g.ticket_id = NEW.id;
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER report_dirty_ticket_row_upd AFTER UPDATE ON tickets FOR EACH ROW
      WHEN ((${inputs('NEW')}) IS DISTINCT FROM (${inputs('OLD')}))
      EXECUTE FUNCTION report_dirty_ticket_row();

    CREATE FUNCTION report_dirty_breach_event_row() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO report_rollup_dirty (tenant_id, hour)
      VALUES (NEW.tenant_id, date_trunc('hour', (NEW.data->>'at')::timestamptz, 'UTC'));
      RETURN NULL;
    END $$;
    CREATE TRIGGER report_dirty_breach_event_row_ins AFTER INSERT ON events FOR EACH ROW
      WHEN (NEW.type IN ${BREACH_TYPES} AND NEW.data->>'at' IS NOT NULL)
      EXECUTE FUNCTION report_dirty_breach_event_row();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER report_dirty_ticket_row_upd ON tickets;
    DROP FUNCTION report_dirty_ticket_row();
    DROP TRIGGER report_dirty_breach_event_row_ins ON events;
    DROP FUNCTION report_dirty_breach_event_row();
    ${STATEMENT_TRIGGERS.map(([table, trigger, fn]) => `CREATE TRIGGER ${trigger} AFTER UPDATE ON ${table} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION ${fn}();`).join('\n    ')}
    CREATE TRIGGER report_dirty_breach_events_ins AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION report_dirty_breach_events();
  `);
}
