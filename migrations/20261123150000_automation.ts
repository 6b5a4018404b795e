import type { Knex } from 'knex';

/**
 * Agent productivity and automation (issue 7): the tag catalogue, saved filters (per agent),
 * macros, canned responses and routing rules.
 *
 * Ticket tags stay where the desk put them (`tickets.tags text[]`, GIN-indexed); `tags` here is the
 * catalogue that gives names a colour and feeds autocomplete. Conditions and actions are jsonb in
 * the shape of CONTRACT §4; they are validated by the service on every write (a jsonb CHECK only
 * guards the outer shape).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- Names are stored as tickets store them: trimmed and lowercased.
    CREATE TABLE tags (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      name        text NOT NULL CHECK (name = lower(btrim(name)) AND name <> ''),
      color       text NOT NULL CHECK (color ~ '^#[0-9a-f]{6}$'),
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX tags_name ON tags (tenant_id, name);

    -- A saved filter belongs to the agent who made it; nobody else sees it.
    CREATE TABLE saved_filters (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      owner_id    uuid NOT NULL,
      name        text NOT NULL,
      conditions  jsonb NOT NULL CHECK (jsonb_typeof(conditions) = 'array'),
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, owner_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );
    CREATE UNIQUE INDEX saved_filters_name ON saved_filters (tenant_id, owner_id, lower(name));

    CREATE TABLE macros (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      name        text NOT NULL,
      actions     jsonb NOT NULL CHECK (jsonb_typeof(actions) = 'array'),
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX macros_name ON macros (tenant_id, lower(name));

    CREATE TABLE canned_responses (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      title       text NOT NULL,
      shortcut    text NOT NULL CHECK (shortcut ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
      body        text NOT NULL,
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX canned_responses_shortcut ON canned_responses (tenant_id, shortcut);

    -- Rules run in (position, id) order; triggers say on which occasions a rule runs.
    CREATE TABLE routing_rules (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      name        text NOT NULL,
      conditions  jsonb NOT NULL CHECK (jsonb_typeof(conditions) = 'array'),
      actions     jsonb NOT NULL CHECK (jsonb_typeof(actions) = 'array'),
      position    integer NOT NULL,
      active      boolean NOT NULL DEFAULT true,
      triggers    text[] NOT NULL DEFAULT '{ticket_created,ticket_updated,time_trigger}'
                    CHECK (triggers <@ '{ticket_created,ticket_updated,time_trigger}'::text[]),
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX routing_rules_name ON routing_rules (tenant_id, lower(name));
    CREATE INDEX routing_rules_order ON routing_rules (tenant_id, position, id) WHERE active;

    -- The least-loaded agent: open tickets per assignee (the desk's tickets_assignee index leads
    -- with the assignee too, but this one skips closed history).
    CREATE INDEX tickets_open_assignee ON tickets (tenant_id, assigned_agent_id)
      WHERE assigned_agent_id IS NOT NULL AND closed_at IS NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS tickets_open_assignee;
    DROP TABLE IF EXISTS routing_rules, canned_responses, macros, saved_filters, tags;
  `);
}
