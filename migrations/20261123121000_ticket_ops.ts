import type { Knex } from 'knex';

/**
 * Ticket operations: links between tickets, collaborators (CC: users or bare email addresses),
 * reply locks and time entries. Rule 2 as everywhere: tenant_id first in every primary key, unique
 * index and foreign key, so no row can point at another tenant's ticket or user.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A link is symmetric: stored once, as the ordered pair (low id, high id), so "A links B" and
    -- "B links A" are the same row and the unique index refuses the second.
    CREATE TABLE ticket_links (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      ticket_a_id uuid NOT NULL,
      ticket_b_id uuid NOT NULL,
      created_by  uuid,
      created_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, ticket_a_id) REFERENCES tickets (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, ticket_b_id) REFERENCES tickets (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, created_by) REFERENCES users (tenant_id, id),
      CHECK (ticket_a_id < ticket_b_id)
    );
    CREATE UNIQUE INDEX ticket_links_pair ON ticket_links (tenant_id, ticket_a_id, ticket_b_id);
    CREATE INDEX ticket_links_b ON ticket_links (tenant_id, ticket_b_id);

    -- A collaborator is a user of the tenant or a bare email address (no user is created for it).
    CREATE TABLE ticket_collaborators (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      ticket_id   uuid NOT NULL,
      user_id     uuid,
      email       text,
      name        text,
      added_by    uuid,
      created_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, ticket_id) REFERENCES tickets (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, added_by) REFERENCES users (tenant_id, id),
      CHECK ((user_id IS NULL) <> (email IS NULL)),
      CHECK (email IS NULL OR email = lower(email))
    );
    CREATE UNIQUE INDEX ticket_collaborators_user ON ticket_collaborators (tenant_id, ticket_id, user_id) WHERE user_id IS NOT NULL;
    CREATE UNIQUE INDEX ticket_collaborators_email ON ticket_collaborators (tenant_id, ticket_id, email) WHERE email IS NOT NULL;

    -- One composer lock per ticket. An expired row is free: the next acquirer overwrites it.
    CREATE TABLE reply_locks (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      ticket_id   uuid NOT NULL,
      user_id     uuid NOT NULL,
      acquired_at timestamptz NOT NULL,
      expires_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, ticket_id),
      FOREIGN KEY (tenant_id, ticket_id) REFERENCES tickets (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );

    CREATE TABLE time_entries (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      ticket_id   uuid NOT NULL,
      user_id     uuid NOT NULL,
      minutes     integer NOT NULL CHECK (minutes BETWEEN 1 AND 1440),
      description text,
      billable    boolean NOT NULL DEFAULT true,
      work_date   date NOT NULL,
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, ticket_id) REFERENCES tickets (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id)
    );
    CREATE INDEX time_entries_ticket ON time_entries (tenant_id, ticket_id, created_at, id);
    CREATE INDEX time_entries_user ON time_entries (tenant_id, user_id, work_date);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS time_entries, reply_locks, ticket_collaborators, ticket_links CASCADE;');
}
