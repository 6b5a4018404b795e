import type { Knex } from 'knex';

/**
 * Reports and analytics (CONTRACT §18, docs/reports.md). Every report is an aggregate over an index
 * range of one tenant and window, so it stays within its budget at a million tickets:
 *
 * - `tickets_resolved_at`: tickets resolved in a window (volume, totals, agents);
 * - `tickets_sla_<target>_outcome`: the instant a target was decided (its breach, else its met), as
 *   the RFC 3339 text the SLA engine stores in `tickets.sla`; that text sorts like the instant, so a
 *   window is a range of the index (sla_compliance_rate);
 * - `messages_public_staff_at` / `messages_public_staff_ticket`: public staff replies by time (an
 *   agent's replies in a window) and by ticket (one-touch resolution);
 * - `events_sla_breaches`: breach events by their breach instant (the breaches list);
 * - `tickets.reopened_count`: how often a ticket left a resolved status for an open one, kept by a
 *   ticket hook (src/reports/reopen-hook.ts); counted here from the timeline for existing tickets.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE tickets ADD COLUMN reopened_count integer NOT NULL DEFAULT 0 CHECK (reopened_count >= 0);

    CREATE INDEX tickets_resolved_at ON tickets (tenant_id, resolved_at) WHERE resolved_at IS NOT NULL;
    CREATE INDEX tickets_sla_first_response_outcome ON tickets
      (tenant_id, (coalesce(sla->'first_response'->>'breached_at', sla->'first_response'->>'met_at')))
      WHERE coalesce(sla->'first_response'->>'breached_at', sla->'first_response'->>'met_at') IS NOT NULL;
    CREATE INDEX tickets_sla_next_response_outcome ON tickets
      (tenant_id, (coalesce(sla->'next_response'->>'breached_at', sla->'next_response'->>'met_at')))
      WHERE coalesce(sla->'next_response'->>'breached_at', sla->'next_response'->>'met_at') IS NOT NULL;
    CREATE INDEX tickets_sla_resolution_outcome ON tickets
      (tenant_id, (coalesce(sla->'resolution'->>'breached_at', sla->'resolution'->>'met_at')))
      WHERE coalesce(sla->'resolution'->>'breached_at', sla->'resolution'->>'met_at') IS NOT NULL;

    CREATE INDEX messages_public_staff_at ON messages (tenant_id, created_at) INCLUDE (author_id, ticket_id)
      WHERE is_agent AND NOT is_private;
    CREATE INDEX messages_public_staff_ticket ON messages (tenant_id, ticket_id)
      WHERE is_agent AND NOT is_private;

    CREATE INDEX events_sla_breaches ON events (tenant_id, (data->>'at'), id)
      WHERE type IN ('ticket.first_response_breached', 'ticket.next_response_breached', 'ticket.sla_breached');

    -- Existing tickets: a status change from a resolved status's name to that of a new, open or
    -- pending status is a reopening (the timeline records status names).
    UPDATE tickets t SET reopened_count = r.n
      FROM (
        SELECT e.tenant_id, e.ticket_id, count(*)::int AS n
          FROM events e
          JOIN statuses f ON f.tenant_id = e.tenant_id AND f.name = e.from_value AND f.category = 'resolved'
          JOIN statuses o ON o.tenant_id = e.tenant_id AND o.name = e.to_value AND o.category IN ('new', 'open', 'pending')
         WHERE e.type = 'ticket.status_changed' AND e.ticket_id IS NOT NULL
         GROUP BY e.tenant_id, e.ticket_id
      ) r
     WHERE t.tenant_id = r.tenant_id AND t.id = r.ticket_id;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS events_sla_breaches;
    DROP INDEX IF EXISTS messages_public_staff_ticket;
    DROP INDEX IF EXISTS messages_public_staff_at;
    DROP INDEX IF EXISTS tickets_sla_resolution_outcome;
    DROP INDEX IF EXISTS tickets_sla_next_response_outcome;
    DROP INDEX IF EXISTS tickets_sla_first_response_outcome;
    DROP INDEX IF EXISTS tickets_resolved_at;
    ALTER TABLE tickets DROP COLUMN IF EXISTS reopened_count;
  `);
}
