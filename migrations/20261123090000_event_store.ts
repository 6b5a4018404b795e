import type { Knex } from 'knex';

/**
 * The event store (ARCHITECTURE rule 3): every change to a ticket, customer, organization or
 * extension appends one row in the transaction of the change. The ticket timeline reads it; the
 * webhook outbox, mail notifications and push fan out from it (src/events/consumers.ts).
 *
 * `seq` orders events for the live stream's Last-Event-ID resume. It is drawn when the writing
 * transaction commits (a deferred constraint trigger), not when the row is inserted, so a long
 * transaction cannot publish an event numbered below one a reader has already passed. The same
 * trigger NOTIFYs `helpdesk_events` with the tenant id: Postgres delivers it only after commit,
 * to every daemon listening.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE SEQUENCE event_seq;

    CREATE TABLE events (
      tenant_id    uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id           uuid NOT NULL,
      seq          bigint UNIQUE,
      type         text NOT NULL CHECK (type ~ '^[a-z_]+\\.[a-z_]+$'),
      ticket_id    uuid,
      subject_type text NOT NULL CHECK (subject_type IN ('ticket', 'customer', 'organization', 'extension', 'tenant')),
      subject_id   uuid,
      actor_id     uuid,
      actor_name   text,
      from_value   text,
      to_value     text,
      data         jsonb NOT NULL DEFAULT '{}',
      created_at   timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX events_ticket ON events (tenant_id, ticket_id, created_at, id) WHERE ticket_id IS NOT NULL;
    CREATE INDEX events_tenant_seq ON events (tenant_id, seq);

    CREATE FUNCTION events_publish() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE events SET seq = nextval('event_seq') WHERE tenant_id = NEW.tenant_id AND id = NEW.id;
      PERFORM pg_notify('helpdesk_events', NEW.tenant_id::text);
      RETURN NULL;
    END $$;

    CREATE CONSTRAINT TRIGGER events_publish AFTER INSERT ON events
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION events_publish();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE events; DROP FUNCTION events_publish(); DROP SEQUENCE event_seq;`);
}
