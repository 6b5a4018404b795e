import type { Knex } from 'knex';

/**
 * Outbound webhooks (SPEC "Outbound webhook endpoints", CONTRACT §5–6).
 *
 * `webhook_deliveries` is the transactional outbox: one row per (event, endpoint), inserted by the
 * event consumer in the transaction of the change (src/webhooks/outbox.ts), so a rolled-back change
 * leaves nothing to send. Dispatchers claim due rows with FOR UPDATE SKIP LOCKED and, before
 * sending, push `next_attempt_at` forward by a lease and stamp a fresh `attempt_id`: a dispatcher
 * that dies mid-send leaves the row due again once the lease runs out (at-least-once, never lost),
 * and a late recorder whose `attempt_id` no longer matches cannot overwrite a newer attempt.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE webhook_endpoints (
      tenant_id    uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id           uuid NOT NULL,
      name         text NOT NULL,
      url          text NOT NULL,
      -- whsec_… encrypted at rest (src/core/crypto.ts); the last four characters for the masked form.
      secret_enc   text NOT NULL,
      secret_last4 text NOT NULL,
      events       text[] NOT NULL,
      headers      jsonb NOT NULL DEFAULT '{}',
      active       boolean NOT NULL DEFAULT true,
      created_at   timestamptz NOT NULL,
      updated_at   timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    -- The outbox consumer looks up the active endpoints subscribed to an event type.
    CREATE INDEX webhook_endpoints_events ON webhook_endpoints USING gin (events) WHERE active;
    CREATE INDEX webhook_endpoints_list ON webhook_endpoints (tenant_id, created_at, id);

    CREATE TABLE webhook_deliveries (
      tenant_id       uuid NOT NULL,
      id              uuid NOT NULL,
      endpoint_id     uuid NOT NULL,
      event_id        uuid NOT NULL,
      event           text NOT NULL,
      status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'dead')),
      -- Attempts started so far (the first send is attempt 1; five retries make six).
      attempt         integer NOT NULL DEFAULT 0 CHECK (attempt >= 0),
      -- The current attempt: the X-Helpdesk-Delivery-Id header, and the claim a recorder must hold.
      attempt_id      uuid,
      next_attempt_at timestamptz,
      status_code     integer,
      latency_ms      integer,
      error           text,
      created_at      timestamptz NOT NULL,
      updated_at      timestamptz NOT NULL,
      delivered_at    timestamptz,
      PRIMARY KEY (tenant_id, id),
      UNIQUE (tenant_id, endpoint_id, event_id),
      FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, event_id) REFERENCES events (tenant_id, id) ON DELETE CASCADE,
      CHECK ((status IN ('pending', 'failed')) = (next_attempt_at IS NOT NULL))
    );
    -- The claim: due rows of every tenant in (next_attempt_at, id) order, read straight off the
    -- index without a sort. Partial, so delivered and dead rows (the bulk of the table over time)
    -- cost the dispatcher nothing.
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status IN ('pending', 'failed');
    -- Delivery history of an endpoint, newest first (cursor pagination on created_at, id).
    -- Also serves the endpoint's status filter and bulk retry. No index of its own for status: every
    -- index of this queue table costs each claim and each recorded outcome a write.
    CREATE INDEX webhook_deliveries_history ON webhook_deliveries (tenant_id, endpoint_id, created_at DESC, id DESC);
    -- A queue table: rows change twice per attempt and the claim reads the due index in order, so
    -- vacuum and statistics must keep up from the first minutes, not after 20 % of the table.
    ALTER TABLE webhook_deliveries SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.01,
      autovacuum_vacuum_threshold = 1000, autovacuum_analyze_threshold = 1000);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE webhook_deliveries; DROP TABLE webhook_endpoints;`);
}
