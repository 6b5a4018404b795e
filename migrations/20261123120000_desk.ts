import type { Knex } from 'knex';

/**
 * The ticket desk: vocabularies (statuses, priorities, ticket types, custom fields), tickets with
 * their per-tenant number counter, messages and attachments.
 *
 * Rule 2 as in the foundation: tenant_id first in every primary key, unique index and foreign key.
 * Every list filter and sort of GET /tickets has a B-tree index `(tenant_id, <filter>, created_at,
 * id)` or `(tenant_id, <sort key>, id)` so a page is an index range scan even at a million tickets
 * per tenant; keyset cursors walk the same indexes (no OFFSET). Tags and custom field values are
 * searched through GIN indexes that also lead with tenant_id (btree_gin).
 *
 * `team_id` and `organization_id` are plain uuid columns here: teams and organizations are created
 * by the directory; migrations/20261123122000_desk_directory_links.ts adds
 *   FOREIGN KEY (tenant_id, team_id) REFERENCES teams (tenant_id, id)
 *   FOREIGN KEY (tenant_id, organization_id) REFERENCES organizations (tenant_id, id)
 * (see docs/architecture.md "Ticket desk").
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE EXTENSION IF NOT EXISTS btree_gin;

    CREATE TABLE statuses (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      key         text NOT NULL CHECK (key ~ '^[a-z][a-z0-9_]{0,63}$'),
      name        text NOT NULL,
      category    text NOT NULL CHECK (category IN ('new', 'open', 'pending', 'resolved', 'closed')),
      pauses_sla  boolean NOT NULL DEFAULT false,
      position    integer NOT NULL,
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX statuses_key ON statuses (tenant_id, key);

    CREATE TABLE priorities (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      key         text NOT NULL CHECK (key ~ '^[a-z][a-z0-9_]{0,63}$'),
      name        text NOT NULL,
      position    integer NOT NULL,
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX priorities_key ON priorities (tenant_id, key);

    -- A type in use cannot be deleted (FK RESTRICT, answered 409); retire it with active = false.
    CREATE TABLE ticket_types (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      name        text NOT NULL,
      description text,
      active      boolean NOT NULL DEFAULT true,
      position    integer NOT NULL DEFAULT 0,
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX ticket_types_name ON ticket_types (tenant_id, lower(name));

    -- Ticket custom fields. Values live in tickets.custom_fields under the field's key.
    CREATE TABLE custom_fields (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      key         text NOT NULL CHECK (key ~ '^[a-z][a-z0-9_]{0,63}$'),
      label       text NOT NULL,
      kind        text NOT NULL CHECK (kind IN ('text', 'select', 'bool', 'date')),
      options     text[] NOT NULL DEFAULT '{}',
      required    boolean NOT NULL DEFAULT false,
      active      boolean NOT NULL DEFAULT true,
      position    integer NOT NULL DEFAULT 0,
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      CHECK (kind = 'select' OR cardinality(options) = 0)
    );
    CREATE UNIQUE INDEX custom_fields_key ON custom_fields (tenant_id, key);

    -- ticket_number: one counter row per tenant, advanced with
    --   INSERT … ON CONFLICT (tenant_id) DO UPDATE SET last_number = last_number + 1 RETURNING
    -- The row lock serialises concurrent creates of one tenant until commit, so numbers are unique;
    -- a rolled-back create gives its number back (no gaps from failed validation).
    CREATE TABLE ticket_counters (
      tenant_id   uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      last_number integer NOT NULL
    );

    CREATE TABLE tickets (
      tenant_id          uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id                 uuid NOT NULL,
      ticket_number      integer NOT NULL,
      subject            text NOT NULL,
      status_id          uuid NOT NULL,
      priority_id        uuid NOT NULL,
      type_id            uuid,
      requester_id       uuid NOT NULL,
      assigned_agent_id  uuid,
      team_id            uuid, -- FK to teams added with the directory's migration
      organization_id    uuid, -- FK to organizations added with the directory's migration
      channel            text NOT NULL CHECK (channel IN ('email', 'webchat', 'webform', 'api', 'messaging_a',
                           'messaging_b', 'messaging_c', 'social_a', 'social_b')),
      tags               text[] NOT NULL DEFAULT '{}',
      custom_fields      jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(custom_fields) = 'object'),
      summary            text,
      resolution_code    text,
      sla                jsonb,
      sla_due_at         timestamptz,
      first_responded_at timestamptz,
      resolved_at        timestamptz,
      closed_at          timestamptz,
      snoozed_until      timestamptz,
      merged_into_id     uuid,
      created_at         timestamptz NOT NULL,
      updated_at         timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, status_id) REFERENCES statuses (tenant_id, id),
      FOREIGN KEY (tenant_id, priority_id) REFERENCES priorities (tenant_id, id),
      FOREIGN KEY (tenant_id, type_id) REFERENCES ticket_types (tenant_id, id),
      FOREIGN KEY (tenant_id, requester_id) REFERENCES users (tenant_id, id),
      FOREIGN KEY (tenant_id, assigned_agent_id) REFERENCES users (tenant_id, id),
      FOREIGN KEY (tenant_id, merged_into_id) REFERENCES tickets (tenant_id, id)
    );
    CREATE UNIQUE INDEX tickets_number ON tickets (tenant_id, ticket_number);
    -- Sorts (keyset: the sort key, then id as the tie-breaker).
    CREATE INDEX tickets_created ON tickets (tenant_id, created_at, id);
    CREATE INDEX tickets_updated ON tickets (tenant_id, updated_at, id);
    -- Tickets without a deadline sort after every dated one; the expression keeps the keyset total.
    CREATE INDEX tickets_sla_due ON tickets (tenant_id, (coalesce(sla_due_at, 'infinity'::timestamptz)), id);
    -- Filters (then the default sort).
    CREATE INDEX tickets_status ON tickets (tenant_id, status_id, created_at, id);
    CREATE INDEX tickets_priority ON tickets (tenant_id, priority_id, created_at, id);
    CREATE INDEX tickets_type ON tickets (tenant_id, type_id, created_at, id);
    CREATE INDEX tickets_assignee ON tickets (tenant_id, assigned_agent_id, created_at, id);
    CREATE INDEX tickets_team ON tickets (tenant_id, team_id, created_at, id);
    CREATE INDEX tickets_channel ON tickets (tenant_id, channel, created_at, id);
    CREATE INDEX tickets_requester ON tickets (tenant_id, requester_id, created_at, id);
    CREATE INDEX tickets_organization ON tickets (tenant_id, organization_id, created_at, id) WHERE organization_id IS NOT NULL;
    CREATE INDEX tickets_merged_into ON tickets (tenant_id, merged_into_id) WHERE merged_into_id IS NOT NULL;
    CREATE INDEX tickets_snoozed ON tickets (tenant_id, snoozed_until) WHERE snoozed_until IS NOT NULL;
    CREATE INDEX tickets_tags ON tickets USING gin (tenant_id, tags);
    -- jsonb_ops (not jsonb_path_ops): it also answers key existence (the ? operator), which deleting a field asks.
    CREATE INDEX tickets_custom_fields ON tickets USING gin (tenant_id, custom_fields);

    CREATE TABLE messages (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      ticket_id   uuid NOT NULL,
      body        text NOT NULL,
      body_html   text,
      is_private  boolean NOT NULL DEFAULT false,
      author_id   uuid,
      author_name text NOT NULL,
      is_agent    boolean NOT NULL,
      channel     text NOT NULL,
      created_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, ticket_id) REFERENCES tickets (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, author_id) REFERENCES users (tenant_id, id)
    );
    CREATE INDEX messages_ticket ON messages (tenant_id, ticket_id, created_at, id);

    -- message_id is null for an inline image uploaded before its message exists.
    CREATE TABLE attachments (
      tenant_id    uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id           uuid NOT NULL,
      ticket_id    uuid,
      message_id   uuid,
      uploaded_by  uuid,
      filename     text NOT NULL,
      content_type text NOT NULL,
      size         bigint NOT NULL CHECK (size >= 0),
      storage_key  text NOT NULL,
      sha256       text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
      created_at   timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, ticket_id) REFERENCES tickets (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, message_id) REFERENCES messages (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, uploaded_by) REFERENCES users (tenant_id, id)
    );
    CREATE INDEX attachments_message ON attachments (tenant_id, message_id) WHERE message_id IS NOT NULL;
    CREATE INDEX attachments_ticket ON attachments (tenant_id, ticket_id) WHERE ticket_id IS NOT NULL;
  `);

  // Tenants created before this migration get the default vocabularies too (new tenants get them
  // from src/tenants/service.ts through src/vocab/defaults.ts, which holds the same list).
  await knex.raw(`
    INSERT INTO statuses (tenant_id, id, key, name, category, pauses_sla, position, created_at, updated_at)
    SELECT t.id, gen_random_uuid(), d.key, d.name, d.category, d.pauses_sla, d.position, now(), now()
      FROM tenants t CROSS JOIN (VALUES
        ('new', 'New', 'new', false, 1),
        ('open', 'Open', 'open', false, 2),
        ('pending', 'Pending', 'pending', true, 3),
        ('waiting_on_vendor', 'Waiting on vendor', 'pending', true, 4),
        ('resolved', 'Resolved', 'resolved', false, 5),
        ('closed', 'Closed', 'closed', false, 6)
      ) AS d(key, name, category, pauses_sla, position);

    INSERT INTO priorities (tenant_id, id, key, name, position, created_at, updated_at)
    SELECT t.id, gen_random_uuid(), d.key, d.name, d.position, now(), now()
      FROM tenants t CROSS JOIN (VALUES
        ('urgent', 'Urgent', 1), ('high', 'High', 2), ('normal', 'Normal', 3), ('low', 'Low', 4)
      ) AS d(key, name, position);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE IF EXISTS attachments, messages, tickets, ticket_counters, custom_fields, ticket_types,
      priorities, statuses CASCADE;
  `);
}
