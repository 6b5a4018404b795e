import type { Knex } from 'knex';

/**
 * Messaging and social channels, web forms (issue 19, CONTRACT §17).
 *
 * - `channel_sources`: one connected channel instance. `config` holds the plain keys; the secret
 *   keys (`access_token`, `app_secret`, `bot_token`, `channel_secret`, `channel_access_token`,
 *   `verify_token`, `secret_token`) live encrypted in `secrets_enc`. The public webhooks carry no
 *   tenant, so a source is found by `lookup_key` (the vendor's phone number, page or account id),
 *   by `token_hash` (SHA-256 of a bot token: the Telegram path) or by `verify_token_hash` (the
 *   handshake); the signature decides between candidates.
 * - `channel_identities`: a sender on a source (phone number or user id) and the customer it is.
 *   `last_inbound_at` is the vendor's timestamp of their latest message (the 24-hour rule).
 * - `channel_tickets`: the source and identity of a ticket opened from a channel.
 * - `channel_inbound`: every inbound message persisted as received before processing, one row per
 *   vendor message id: the unique key is the deduplication.
 * - `channel_deliveries`: the outbound queue of public staff replies (retries with back-off); the
 *   message's visible `delivery` is `messages.delivery`.
 * - `channel_templates`: approved message templates of a `messaging_a` source.
 * - `webforms`, `webform_submissions` (the rate limit counts these).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE channel_sources (
      tenant_id         uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id                uuid NOT NULL,
      channel           text NOT NULL CHECK (channel IN ('messaging_a', 'messaging_b', 'messaging_c', 'social_a', 'social_b')),
      name              text NOT NULL,
      config            jsonb NOT NULL DEFAULT '{}',
      secrets_enc       text,
      status            text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'error', 'disconnected')),
      last_error        text,
      lookup_key        text,
      token_hash        text,
      verify_token_hash text,
      created_at        timestamptz NOT NULL,
      updated_at        timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    -- Cross-tenant lookups of the public webhooks (they carry no tenant).
    CREATE INDEX channel_sources_lookup ON channel_sources (channel, lookup_key) WHERE status <> 'disconnected';
    CREATE INDEX channel_sources_token ON channel_sources (token_hash) WHERE token_hash IS NOT NULL;
    CREATE INDEX channel_sources_verify ON channel_sources (verify_token_hash) WHERE verify_token_hash IS NOT NULL;

    CREATE TABLE channel_identities (
      tenant_id       uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id              uuid NOT NULL,
      source_id       uuid NOT NULL,
      external_id     text NOT NULL,
      user_id         uuid NOT NULL,
      display_name    text,
      last_inbound_at timestamptz,
      created_at      timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      UNIQUE (tenant_id, source_id, external_id),
      FOREIGN KEY (tenant_id, source_id) REFERENCES channel_sources (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );

    -- Which source and identity a channel ticket talks to (threading and replies).
    CREATE TABLE channel_tickets (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      ticket_id   uuid NOT NULL,
      source_id   uuid NOT NULL,
      identity_id uuid NOT NULL,
      created_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, ticket_id),
      FOREIGN KEY (tenant_id, ticket_id) REFERENCES tickets (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, source_id) REFERENCES channel_sources (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, identity_id) REFERENCES channel_identities (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX channel_tickets_identity ON channel_tickets (tenant_id, identity_id, created_at);

    CREATE TABLE channel_inbound (
      tenant_id    uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id           uuid NOT NULL,
      source_id    uuid NOT NULL,
      external_id  text NOT NULL,
      payload      jsonb NOT NULL,
      status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
      attempts     integer NOT NULL DEFAULT 0,
      locked_until timestamptz,
      error        text,
      ticket_id    uuid,
      message_id   uuid,
      received_at  timestamptz NOT NULL,
      processed_at timestamptz,
      PRIMARY KEY (tenant_id, id),
      UNIQUE (tenant_id, source_id, external_id),
      FOREIGN KEY (tenant_id, source_id) REFERENCES channel_sources (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX channel_inbound_pending ON channel_inbound (tenant_id, received_at) WHERE status = 'pending';

    ALTER TABLE messages ADD COLUMN delivery jsonb;

    CREATE TABLE channel_deliveries (
      tenant_id       uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      message_id      uuid NOT NULL,
      ticket_id       uuid NOT NULL,
      source_id       uuid NOT NULL,
      identity_id     uuid NOT NULL,
      status          text NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
      attempts        integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      error           text,
      external_id     text,
      created_at      timestamptz NOT NULL,
      updated_at      timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, message_id),
      FOREIGN KEY (tenant_id, message_id) REFERENCES messages (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, source_id) REFERENCES channel_sources (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, identity_id) REFERENCES channel_identities (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX channel_deliveries_due ON channel_deliveries (tenant_id, next_attempt_at) WHERE next_attempt_at IS NOT NULL;

    CREATE TABLE channel_templates (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      source_id   uuid NOT NULL,
      name        text NOT NULL,
      language    text NOT NULL,
      category    text,
      status      text NOT NULL,
      components  jsonb NOT NULL DEFAULT '[]',
      external_id text,
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      UNIQUE (tenant_id, source_id, name, language),
      FOREIGN KEY (tenant_id, source_id) REFERENCES channel_sources (tenant_id, id) ON DELETE CASCADE
    );

    CREATE TABLE webforms (
      tenant_id  uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id         uuid NOT NULL,
      title      text NOT NULL,
      fields     jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );

    CREATE TABLE webform_submissions (
      tenant_id  uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id         uuid NOT NULL,
      form_id    uuid NOT NULL,
      ip_hash    text NOT NULL,
      ticket_id  uuid,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, form_id) REFERENCES webforms (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX webform_submissions_rate ON webform_submissions (tenant_id, form_id, ip_hash, created_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE webform_submissions, webforms, channel_templates, channel_deliveries, channel_inbound, channel_tickets, channel_identities, channel_sources;
    ALTER TABLE messages DROP COLUMN delivery;
  `);
}
