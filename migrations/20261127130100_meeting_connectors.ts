import type { Knex } from 'knex';

/**
 * Meeting connectors (issue 15, SPEC "Meeting rules" 6): video rooms (`video_a/b/c`) and external
 * calendars (`calendar_a/b`).
 *
 * - `meeting_connectors`: registered once per tenant by an administrator (client id, encrypted
 *   client secret, the vendor's base URL).
 * - `connector_accounts`: an agent's connected account: OAuth 2.0 tokens encrypted at rest; for a
 *   calendar, the change subscription (its id, encrypted client state / channel token, expiry).
 *   The inbound calendar webhooks find the account (and so the tenant) by the subscription id.
 * - `meeting_mirrors`: the remote event of a meeting in an organizer's external calendar.
 * - `meetings.video_room_id`: the connector's room behind `join_url`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE meeting_connectors (
      tenant_id         uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      provider          text NOT NULL CHECK (provider IN ('video_a', 'video_b', 'video_c', 'calendar_a', 'calendar_b')),
      client_id         text NOT NULL,
      client_secret_enc text NOT NULL,
      base_url          text NOT NULL,
      created_at        timestamptz NOT NULL,
      updated_at        timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, provider)
    );

    CREATE TABLE connector_accounts (
      tenant_id               uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id                      uuid NOT NULL,
      user_id                 uuid NOT NULL,
      provider                text NOT NULL,
      access_token_enc        text NOT NULL,
      refresh_token_enc       text,
      expires_at              timestamptz,
      subscription_id         text,
      subscription_secret_enc text,
      subscription_expires_at timestamptz,
      last_notified_at        timestamptz,
      created_at              timestamptz NOT NULL,
      updated_at              timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      UNIQUE (tenant_id, user_id, provider),
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, provider) REFERENCES meeting_connectors (tenant_id, provider) ON DELETE CASCADE
    );
    CREATE UNIQUE INDEX connector_accounts_subscription ON connector_accounts (provider, subscription_id) WHERE subscription_id IS NOT NULL;
    CREATE INDEX connector_accounts_renewal ON connector_accounts (subscription_expires_at) WHERE subscription_id IS NOT NULL;

    CREATE TABLE meeting_mirrors (
      tenant_id       uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      meeting_id      uuid NOT NULL,
      account_id      uuid NOT NULL,
      remote_event_id text NOT NULL,
      created_at      timestamptz NOT NULL,
      updated_at      timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, meeting_id, account_id),
      FOREIGN KEY (tenant_id, account_id) REFERENCES connector_accounts (tenant_id, id) ON DELETE CASCADE
    );

    ALTER TABLE meetings ADD COLUMN video_room_id text;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE meetings DROP COLUMN video_room_id;
    DROP TABLE meeting_mirrors;
    DROP TABLE connector_accounts;
    DROP TABLE meeting_connectors;
  `);
}
