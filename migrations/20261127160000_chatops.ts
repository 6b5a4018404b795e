import type { Knex } from 'knex';

/**
 * Chat-ops (SPEC "Extensions": /integrations/chat/{provider}/routes, /tickets/{id}/chat-thread,
 * /tickets/{id}/thread-notes). `chat_routes` binds a team to one channel of a chat extension;
 * `chat_threads` is the one chat thread a ticket has (opened by the extension in its team's
 * channel); `thread_notes` are the notes written into that thread from the desk.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE chat_routes (
      tenant_id     uuid NOT NULL,
      extension_id  uuid NOT NULL,
      team_id       uuid NOT NULL,
      channel_id    text NOT NULL,
      channel_name  text NOT NULL DEFAULT '',
      created_at    timestamptz NOT NULL,
      updated_at    timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, extension_id, team_id),
      FOREIGN KEY (tenant_id, extension_id) REFERENCES extensions (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, team_id) REFERENCES teams (tenant_id, id) ON DELETE CASCADE
    );

    CREATE TABLE chat_threads (
      tenant_id     uuid NOT NULL,
      ticket_id     uuid NOT NULL,
      extension_id  uuid NOT NULL,
      channel_id    text NOT NULL,
      thread_id     text NOT NULL,
      url           text,
      created_by    uuid,
      created_at    timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, ticket_id),
      FOREIGN KEY (tenant_id, ticket_id) REFERENCES tickets (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, extension_id) REFERENCES extensions (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX chat_threads_extension ON chat_threads (tenant_id, extension_id);

    CREATE TABLE thread_notes (
      tenant_id     uuid NOT NULL,
      id            uuid NOT NULL,
      ticket_id     uuid NOT NULL,
      author_id     uuid,
      author_name   text NOT NULL DEFAULT '',
      body          text NOT NULL,
      external_id   text,
      created_at    timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, ticket_id) REFERENCES tickets (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX thread_notes_ticket ON thread_notes (tenant_id, ticket_id, created_at, id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS thread_notes; DROP TABLE IF EXISTS chat_threads; DROP TABLE IF EXISTS chat_routes;');
}
