import type { Knex } from 'knex';

/**
 * The email channel (CONTRACT §14): a tenant's mail settings (SMTP, IMAP with its resume point),
 * edited notification templates, the notification outbox, and the Message-IDs seen and sent
 * (re-delivery detection, threading, the per-sender rate limit).
 *
 * Rule 2 as everywhere: tenant_id first in every primary key, unique index and foreign key. The
 * outbox's claim index is instance-wide on purpose (the mail-send job walks every tenant). The
 * inbound token is derived from the tenant id with a keyed HMAC (src/mail/inbound-token.ts), so
 * it needs no column.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE mail_settings (
      tenant_id              uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      smtp_host              text,
      smtp_port              integer CHECK (smtp_port BETWEEN 1 AND 65535),
      smtp_security          text CHECK (smtp_security IN ('tls', 'starttls', 'none')),
      smtp_username          text,
      smtp_password_enc      text,
      from_address           text,
      from_name              text,
      imap_host              text,
      imap_port              integer CHECK (imap_port BETWEEN 1 AND 65535),
      imap_security          text CHECK (imap_security IN ('tls', 'starttls', 'none')),
      imap_username          text,
      imap_password_enc      text,
      imap_mailbox           text NOT NULL DEFAULT 'INBOX',
      poll_interval_seconds  integer NOT NULL DEFAULT 60 CHECK (poll_interval_seconds BETWEEN 10 AND 86400),
      delete_after_import    boolean NOT NULL DEFAULT false,
      -- The IMAP resume point: the mailbox's UIDVALIDITY and the last UID imported under it.
      imap_uid_validity      bigint,
      imap_last_uid          bigint NOT NULL DEFAULT 0,
      imap_polled_at         timestamptz,
      imap_error             text,
      created_at             timestamptz NOT NULL,
      updated_at             timestamptz NOT NULL,
      CHECK ((smtp_host IS NULL) = (from_address IS NULL))
    );

    -- Only edited texts are stored; the shipped ones live in src/mail/template-defaults.ts.
    CREATE TABLE notification_templates (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      identifier  text NOT NULL,
      locale      text NOT NULL,
      subject     text NOT NULL,
      body_html   text NOT NULL,
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX notification_templates_key ON notification_templates (tenant_id, identifier, locale);

    -- The notification outbox: rendered in the change's transaction, sent after commit by mail-send.
    CREATE TABLE notifications (
      tenant_id        uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id               uuid NOT NULL,
      identifier       text NOT NULL,
      event_id         uuid NOT NULL,
      ticket_id        uuid,
      recipient_id     uuid,
      to_address       text NOT NULL,
      subject          text NOT NULL,
      body_html        text NOT NULL,
      body_text        text NOT NULL,
      message_id       text NOT NULL,
      in_reply_to      text,
      "references"     text[] NOT NULL DEFAULT '{}',
      status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
      attempts         integer NOT NULL DEFAULT 0,
      next_attempt_at  timestamptz,
      last_error       text,
      created_at       timestamptz NOT NULL,
      sent_at          timestamptz,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, ticket_id) REFERENCES tickets (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, recipient_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX notifications_due ON notifications (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX notifications_ticket ON notifications (tenant_id, ticket_id, created_at);

    -- Every Message-ID we received (direction 'in') or sent ('out'), with its ticket: a repeated
    -- inbound id is a re-delivery; In-Reply-To/References find the ticket; from_address and
    -- created_at count a sender's recent mail for the rate limit.
    CREATE TABLE mail_message_ids (
      tenant_id     uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id            uuid NOT NULL,
      direction     text NOT NULL CHECK (direction IN ('in', 'out')),
      message_id    text NOT NULL,
      ticket_id     uuid,
      from_address  text,
      created_at    timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, ticket_id) REFERENCES tickets (tenant_id, id) ON DELETE CASCADE
    );
    CREATE UNIQUE INDEX mail_message_ids_key ON mail_message_ids (tenant_id, direction, message_id);
    CREATE INDEX mail_message_ids_lookup ON mail_message_ids (tenant_id, message_id);
    CREATE INDEX mail_message_ids_sender ON mail_message_ids (tenant_id, from_address, created_at) WHERE direction = 'in';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS mail_message_ids, notifications, notification_templates, mail_settings CASCADE;');
}
