import type { Knex } from 'knex';

/**
 * Events are numbered by a publisher, not by the writer's commit (docs/performance.md, "The batched
 * event publisher").
 *
 * Before, a deferred trigger numbered each event at its writer's commit under a per-tenant advisory
 * lock held through the WAL flush, and NOTIFYd there (PostgreSQL's global notify lock, also held
 * through the flush): one tenant's event-writing commits queued for one flush each.
 *
 * Now a writer commits its events with `seq` NULL, taking no lock and sending no NOTIFY.
 * `events_publish_pending(tenant)` then numbers every committed, unnumbered event of that tenant in
 * one statement, in id order, and NOTIFYs once. It takes the same per-tenant advisory lock as the
 * trigger did, so runs of one tenant are serialised: each run's numbers are drawn after the previous
 * run is visible (PostgreSQL releases a transaction's advisory lock only after its commit is visible
 * to new snapshots), and all numbers of one run become visible at once, in its commit. So per
 * tenant `seq` order is still visibility order: a reader that has seen `seq` N never later finds an
 * event numbered below N. The process that committed the events calls it right after the commit
 * (src/events/publisher.ts, many commits sharing one run); the `event-publish` job calls it for what
 * a process that died in between left unnumbered.
 *
 * Called as one statement (autocommit), the function is one short transaction: the lock is held for
 * one UPDATE and one commit, and that commit serves every event it numbered.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER events_publish ON events;
    DROP FUNCTION events_publish();

    CREATE INDEX events_unnumbered ON events (tenant_id, id) WHERE seq IS NULL;

    CREATE FUNCTION events_publish_pending(tenant uuid) RETURNS integer LANGUAGE plpgsql AS $$
    DECLARE
      numbered integer;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('helpdesk-events:' || tenant::text));
      -- A fresh snapshot (a new statement of a volatile function, READ COMMITTED): every event
      -- committed before the lock was granted, including those of the previous run, is seen.
      WITH pending AS (
        SELECT p.id, nextval('event_seq') AS seq
          FROM (SELECT id FROM events WHERE tenant_id = tenant AND seq IS NULL ORDER BY id) p
      )
      UPDATE events e SET seq = pending.seq
        FROM pending
       WHERE e.tenant_id = tenant AND e.id = pending.id AND e.seq IS NULL;
      GET DIAGNOSTICS numbered = ROW_COUNT;
      IF numbered > 0 THEN
        PERFORM pg_notify('helpdesk_events', tenant::text);
      END IF;
      RETURN numbered;
    END $$;
  `);
  // Whatever is unnumbered now (seeded or imported with the trigger off) is numbered once here.
  await knex.raw(`
    DO $$
    DECLARE t uuid;
    BEGIN
      FOR t IN SELECT DISTINCT tenant_id FROM events WHERE seq IS NULL LOOP
        PERFORM events_publish_pending(t);
      END LOOP;
    END $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP FUNCTION events_publish_pending(uuid);
    DROP INDEX events_unnumbered;
    CREATE FUNCTION events_publish() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('helpdesk-events:' || NEW.tenant_id::text));
      UPDATE events SET seq = nextval('event_seq') WHERE tenant_id = NEW.tenant_id AND id = NEW.id;
      PERFORM pg_notify('helpdesk_events', NEW.tenant_id::text);
      RETURN NULL;
    END $$;
    CREATE CONSTRAINT TRIGGER events_publish AFTER INSERT ON events
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION events_publish();
  `);
}
