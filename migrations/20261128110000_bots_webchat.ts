import type { Knex } from 'knex';

/**
 * Bot flows and live chat (SPEC "Bot flows", "Live chat", CONTRACT §16).
 *
 * - `bot_flows`: a flow's graph (`nodes` jsonb, validated by src/bots/validate.ts).
 * - `bot_sessions`: one run of a flow for one conversation of any channel (`channel` +
 *   `conversation_key`), with its transcript and collected fields; at most one active session per
 *   conversation.
 * - `webchat_widgets`, `webchat_visitors` (visitor tokens `hdv_…` stored only as SHA-256 hashes),
 *   `webchat_conversations` (backed by a ticket of channel `webchat` once it leaves the bot),
 *   `webchat_presence` (agent heartbeats), `webchat_blocks`.
 * - `webchat_events`: the console's and the visitors' live streams. Like `events`, `seq` is drawn
 *   at commit under a per-tenant advisory lock (seq order is visibility order, so Last-Event-ID
 *   resume never skips) and the commit NOTIFYs `helpdesk_events` with the tenant id, so every
 *   daemon's one LISTEN connection wakes its streams.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE bot_flows (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      name        text NOT NULL,
      active      boolean NOT NULL DEFAULT false,
      start_node  text NOT NULL,
      nodes       jsonb NOT NULL,
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX bot_flows_name ON bot_flows (tenant_id, lower(name), id);

    CREATE TABLE bot_sessions (
      tenant_id         uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id                uuid NOT NULL,
      flow_id           uuid NOT NULL,
      channel           text NOT NULL,
      conversation_key  text NOT NULL,
      conversation_id   uuid,
      status            text NOT NULL CHECK (status IN ('active', 'completed', 'handed_off', 'abandoned')),
      current_node      text,
      fields            jsonb NOT NULL DEFAULT '{}',
      transcript        jsonb NOT NULL DEFAULT '[]',
      started_at        timestamptz NOT NULL,
      last_activity_at  timestamptz NOT NULL,
      ended_at          timestamptz,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX bot_sessions_active ON bot_sessions (tenant_id, channel, conversation_key) WHERE status = 'active';
    CREATE INDEX bot_sessions_idle ON bot_sessions (tenant_id, last_activity_at) WHERE status = 'active';
    CREATE INDEX bot_sessions_list ON bot_sessions (tenant_id, started_at DESC, id DESC);

    CREATE TABLE webchat_widgets (
      tenant_id        uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id               uuid NOT NULL,
      name             text NOT NULL,
      allowed_origins  jsonb NOT NULL DEFAULT '[]',
      greeting         text NOT NULL DEFAULT '',
      bot_flow_id      uuid,
      offline_message  text NOT NULL DEFAULT '',
      created_at       timestamptz NOT NULL,
      updated_at       timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    -- The visitor API names a widget by id alone (no tenant yet): ids are UUIDv7, unique anyway.
    CREATE UNIQUE INDEX webchat_widgets_id ON webchat_widgets (id);

    CREATE TABLE webchat_visitors (
      tenant_id     uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id            uuid NOT NULL,
      widget_id     uuid NOT NULL,
      name          text,
      email         text,
      token_hash    text NOT NULL,
      user_id       uuid,
      online        boolean NOT NULL DEFAULT true,
      last_seen_at  timestamptz NOT NULL,
      rate_window   timestamptz,
      rate_count    integer NOT NULL DEFAULT 0,
      created_at    timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, widget_id) REFERENCES webchat_widgets (tenant_id, id) ON DELETE CASCADE
    );
    CREATE UNIQUE INDEX webchat_visitors_token ON webchat_visitors (token_hash);
    CREATE INDEX webchat_visitors_online ON webchat_visitors (tenant_id, last_seen_at) WHERE online;

    CREATE TABLE webchat_conversations (
      tenant_id          uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id                 uuid NOT NULL,
      widget_id          uuid NOT NULL,
      visitor_id         uuid NOT NULL,
      status             text NOT NULL CHECK (status IN ('bot', 'waiting', 'active', 'ended')),
      assigned_agent_id  uuid,
      offered_to_id      uuid,
      ticket_id          uuid,
      bot_session_id     uuid,
      started_at         timestamptz NOT NULL,
      ended_at           timestamptz,
      last_message_at    timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, widget_id) REFERENCES webchat_widgets (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, visitor_id) REFERENCES webchat_visitors (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, ticket_id) REFERENCES tickets (tenant_id, id) ON DELETE SET NULL (ticket_id)
    );
    CREATE INDEX webchat_conversations_status ON webchat_conversations (tenant_id, status, started_at, id);
    CREATE INDEX webchat_conversations_visitor ON webchat_conversations (tenant_id, visitor_id);
    CREATE INDEX webchat_conversations_agent ON webchat_conversations (tenant_id, assigned_agent_id) WHERE status = 'active';

    CREATE TABLE webchat_presence (
      tenant_id     uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      user_id       uuid NOT NULL,
      status        text NOT NULL CHECK (status IN ('online', 'away', 'offline')),
      last_seen_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, user_id),
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );

    CREATE TABLE webchat_blocks (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      visitor_id  uuid NOT NULL,
      reason      text NOT NULL DEFAULT '',
      created_by  uuid,
      created_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, visitor_id) REFERENCES webchat_visitors (tenant_id, id) ON DELETE CASCADE
    );
    CREATE UNIQUE INDEX webchat_blocks_visitor ON webchat_blocks (tenant_id, visitor_id);

    CREATE TABLE webchat_events (
      tenant_id        uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id               uuid NOT NULL,
      seq              bigint UNIQUE,
      audience         text NOT NULL CHECK (audience IN ('staff', 'visitor')),
      type             text NOT NULL,
      conversation_id  uuid,
      data             jsonb NOT NULL DEFAULT '{}',
      created_at       timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX webchat_events_seq ON webchat_events (tenant_id, seq);
    CREATE INDEX webchat_events_conversation ON webchat_events (tenant_id, conversation_id, seq);

    CREATE FUNCTION webchat_events_publish() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('helpdesk-webchat-events:' || NEW.tenant_id::text));
      UPDATE webchat_events SET seq = nextval('event_seq') WHERE tenant_id = NEW.tenant_id AND id = NEW.id;
      PERFORM pg_notify('helpdesk_events', NEW.tenant_id::text);
      RETURN NULL;
    END $$;

    CREATE CONSTRAINT TRIGGER webchat_events_publish AFTER INSERT ON webchat_events
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION webchat_events_publish();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE IF EXISTS webchat_events; DROP FUNCTION IF EXISTS webchat_events_publish();
    DROP TABLE IF EXISTS webchat_blocks; DROP TABLE IF EXISTS webchat_presence;
    DROP TABLE IF EXISTS webchat_conversations; DROP TABLE IF EXISTS webchat_visitors;
    DROP TABLE IF EXISTS webchat_widgets; DROP TABLE IF EXISTS bot_sessions; DROP TABLE IF EXISTS bot_flows;
  `);
}
