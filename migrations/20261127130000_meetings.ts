import type { Knex } from 'knex';

/**
 * Meetings and calendars (issue 15, CONTRACT §7).
 *
 * - `meetings`: one row per meeting; a recurring series is one row with its RRULE, expanded on the
 *   fly in the organizer's `timezone`. `last_end_at` is the end of the last occurrence (null for a
 *   series without an end bound), so a window query is one index range.
 * - `meeting_attendees`: staff users, ticket collaborators or external addresses, by email.
 * - `users.calendar_feed_token_hash`: the personal feed's token, stored only as its SHA-256 hash.
 * - `notifications.ical_method` / `ical_content`: an invitation rides the mail outbox (and its
 *   retries) with its iCalendar part.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE meetings (
      tenant_id       uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id              uuid NOT NULL,
      title           text NOT NULL,
      description     text,
      start_at        timestamptz NOT NULL,
      end_at          timestamptz NOT NULL,
      last_end_at     timestamptz,
      timezone        text NOT NULL,
      video_provider  text NOT NULL CHECK (video_provider IN ('manual', 'video_a', 'video_b', 'video_c')),
      join_url        text,
      ticket_id       uuid,
      organizer_id    uuid NOT NULL,
      recurrence_rule text,
      invite_sequence integer NOT NULL DEFAULT 0,
      status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'cancelled')),
      cancel_reason   text,
      created_at      timestamptz NOT NULL,
      updated_at      timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, ticket_id) REFERENCES tickets (tenant_id, id) ON DELETE SET NULL (ticket_id),
      FOREIGN KEY (tenant_id, organizer_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE,
      CHECK (end_at > start_at)
    );
    CREATE INDEX meetings_window ON meetings (tenant_id, start_at, last_end_at) WHERE status = 'active';
    CREATE INDEX meetings_organizer ON meetings (tenant_id, organizer_id, start_at);
    CREATE INDEX meetings_ticket ON meetings (tenant_id, ticket_id) WHERE ticket_id IS NOT NULL;

    CREATE TABLE meeting_attendees (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      meeting_id  uuid NOT NULL,
      user_id     uuid,
      email       text NOT NULL CHECK (email = lower(email)),
      name        text,
      response    text NOT NULL DEFAULT 'needs_action' CHECK (response IN ('needs_action', 'accepted', 'declined', 'tentative')),
      position    integer NOT NULL,
      PRIMARY KEY (tenant_id, id),
      UNIQUE (tenant_id, meeting_id, email),
      FOREIGN KEY (tenant_id, meeting_id) REFERENCES meetings (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX meeting_attendees_user ON meeting_attendees (tenant_id, user_id) WHERE user_id IS NOT NULL;

    ALTER TABLE users ADD COLUMN calendar_feed_token_hash text;
    -- The public feed route finds the user (and so the tenant) by the token's hash.
    CREATE UNIQUE INDEX users_calendar_feed_token ON users (calendar_feed_token_hash) WHERE calendar_feed_token_hash IS NOT NULL;

    ALTER TABLE notifications ADD COLUMN ical_method text CHECK (ical_method IN ('REQUEST', 'CANCEL'));
    ALTER TABLE notifications ADD COLUMN ical_content text;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE notifications DROP COLUMN ical_content;
    ALTER TABLE notifications DROP COLUMN ical_method;
    DROP INDEX users_calendar_feed_token;
    ALTER TABLE users DROP COLUMN calendar_feed_token_hash;
    DROP TABLE meeting_attendees;
    DROP TABLE meetings;
  `);
}
