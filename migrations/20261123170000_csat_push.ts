import type { Knex } from 'knex';

/**
 * CSAT surveys and browser push (issue 11, CONTRACT §14).
 *
 * - `csat_settings`: one row per tenant (absent = the defaults: disabled).
 * - `csat_surveys`: one row per entry of a ticket into the trigger category. The token is stored
 *   as a SHA-256 hash (the lookup) and encrypted (so the resolved mail can print the link later).
 *   The rating lives on the survey row: reports compute `csat_average_score` over
 *   `(tenant_id, submitted_at)` and `csat_response_rate` over `(tenant_id, created_at)`, both
 *   index range scans. The token lookup decides the tenant, so it has its own index on the hash.
 * - `tickets.csat`: the latest rating, denormalised, so the ticket output needs no join.
 * - `users.notification_preferences`: email / push switches and the active window (quiet hours).
 * - `push_subscriptions` per staff user; `push_messages` is the outbox written in the change's
 *   transaction and drained after commit (and by the `push-send` job).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE csat_settings (
      tenant_id       uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      enabled         boolean NOT NULL DEFAULT false,
      trigger         text NOT NULL DEFAULT 'resolved' CHECK (trigger IN ('resolved', 'closed')),
      question        text NOT NULL,
      comment_enabled boolean NOT NULL DEFAULT true,
      reasons         text[] NOT NULL DEFAULT '{}',
      updated_at      timestamptz NOT NULL,
      PRIMARY KEY (tenant_id)
    );

    CREATE TABLE csat_surveys (
      tenant_id       uuid NOT NULL,
      id              uuid NOT NULL,
      ticket_id       uuid NOT NULL,
      token_hash      text NOT NULL,
      token_encrypted text NOT NULL,
      created_at      timestamptz NOT NULL,
      expires_at      timestamptz NOT NULL,
      score           smallint CHECK (score BETWEEN 1 AND 5),
      comment         text,
      reason          text,
      submitted_at    timestamptz,
      PRIMARY KEY (tenant_id, id),
      UNIQUE (tenant_id, token_hash),
      FOREIGN KEY (tenant_id, ticket_id) REFERENCES tickets (tenant_id, id) ON DELETE CASCADE
    );
    -- The public token routes find the survey (and so the tenant) by the token's hash.
    CREATE INDEX csat_surveys_token ON csat_surveys (token_hash);
    CREATE INDEX csat_surveys_ticket ON csat_surveys (tenant_id, ticket_id, created_at);
    -- Reports: surveys sent in a window (response rate) and ratings submitted in a window (average).
    CREATE INDEX csat_surveys_sent ON csat_surveys (tenant_id, created_at) INCLUDE (submitted_at);
    CREATE INDEX csat_surveys_rated ON csat_surveys (tenant_id, submitted_at) INCLUDE (score) WHERE submitted_at IS NOT NULL;

    ALTER TABLE tickets ADD COLUMN csat jsonb;
    ALTER TABLE users ADD COLUMN notification_preferences jsonb NOT NULL
      DEFAULT '{"email": true, "push": true, "active_window": null}';

    CREATE TABLE push_subscriptions (
      tenant_id  uuid NOT NULL,
      id         uuid NOT NULL,
      user_id    uuid NOT NULL,
      endpoint   text NOT NULL,
      p256dh     text NOT NULL,
      auth       text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      UNIQUE (tenant_id, endpoint),
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX push_subscriptions_user ON push_subscriptions (tenant_id, user_id);

    CREATE TABLE push_messages (
      tenant_id       uuid NOT NULL,
      id              uuid NOT NULL,
      subscription_id uuid NOT NULL,
      payload         jsonb NOT NULL,
      urgency         text NOT NULL CHECK (urgency IN ('very-low', 'low', 'normal', 'high')),
      ttl_seconds     integer NOT NULL,
      status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
      attempts        integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      last_error      text,
      created_at      timestamptz NOT NULL,
      sent_at         timestamptz,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, subscription_id) REFERENCES push_subscriptions (tenant_id, id) ON DELETE CASCADE
    );
    -- The sender claims due rows across tenants (FOR UPDATE SKIP LOCKED).
    CREATE INDEX push_messages_due ON push_messages (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX push_messages_tenant_due ON push_messages (tenant_id, next_attempt_at) WHERE status = 'pending';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE push_messages, push_subscriptions, csat_surveys, csat_settings;
    ALTER TABLE users DROP COLUMN notification_preferences;
    ALTER TABLE tickets DROP COLUMN csat;
  `);
}
