import type { Knex } from 'knex';

/**
 * The live stream (GET /tickets/stream) resumes from the last `seq` a client saw, so within one
 * tenant an event must never become visible after an event with a higher `seq`. Drawing `seq` in a
 * deferred trigger alone does not promise that: two transactions can draw 10 and 11 and the one
 * holding 11 can finish its commit first (the WAL flush of the other is still running); a reader
 * in between passes 11 and never sees 10.
 *
 * So the trigger first takes a transaction-level advisory lock per tenant. PostgreSQL releases
 * such a lock only after the commit is visible to new snapshots, so the next transaction of that
 * tenant draws its number after the previous one is readable: per tenant, `seq` order is
 * visibility order. The cost is that event-writing commits of one tenant queue behind each other
 * for the length of a commit; other tenants are unaffected.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION events_publish() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('helpdesk-events:' || NEW.tenant_id::text));
      UPDATE events SET seq = nextval('event_seq') WHERE tenant_id = NEW.tenant_id AND id = NEW.id;
      PERFORM pg_notify('helpdesk_events', NEW.tenant_id::text);
      RETURN NULL;
    END $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION events_publish() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE events SET seq = nextval('event_seq') WHERE tenant_id = NEW.tenant_id AND id = NEW.id;
      PERFORM pg_notify('helpdesk_events', NEW.tenant_id::text);
      RETURN NULL;
    END $$;
  `);
}
