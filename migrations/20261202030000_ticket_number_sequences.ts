import type { Knex } from 'knex';

/**
 * Ticket numbers come from one PostgreSQL sequence per tenant (CONTRACT §1: "an integer sequence
 * per tenant starting at 1"), in the schema `ticket_numbers`, named by the tenant's id. A create
 * draws its number with `nextval` inside the statement that inserts the ticket.
 *
 * Before, a counter row per tenant (`ticket_counters`) was advanced in a statement of its own, on a
 * pool of its own, committed at once so that no create held the row's lock until it committed: a
 * round trip, a pool checkout, a row version and its commit record for every new ticket
 * (docs/performance.md). A sequence hands out numbers without a row lock and outside any
 * transaction, which is what that arrangement imitated; what it gives up is the same as before:
 * a create that fails after drawing leaves its number unused.
 *
 * The sequences follow the tenants: a trigger creates one with each tenant and drops it with the
 * tenant. `ticket_numbers_reserve_through(tenant, top)` raises a sequence above numbers an import
 * keeps, exactly even while the tenant's creates draw numbers (see below).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE SCHEMA ticket_numbers;

    CREATE FUNCTION ticket_numbers_create(tenant uuid) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      EXECUTE format('CREATE SEQUENCE IF NOT EXISTS ticket_numbers.%I AS integer MINVALUE 1', tenant::text);
    END $$;

    CREATE FUNCTION ticket_numbers_follow_tenant() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        PERFORM ticket_numbers_create(NEW.id);
      ELSE
        EXECUTE format('DROP SEQUENCE IF EXISTS ticket_numbers.%I', OLD.id::text);
      END IF;
      RETURN NULL;
    END $$;

    CREATE TRIGGER tenants_ticket_numbers AFTER INSERT OR DELETE ON tenants
      FOR EACH ROW EXECUTE FUNCTION ticket_numbers_follow_tenant();

    -- The next number drawn will be above top. setval alone could move a sequence back past
    -- numbers drawn between reading its value and setting it; the ALTER SEQUENCE first takes a
    -- lock that nextval's conflicts with, so it waits for the transactions that drew numbers and
    -- holds off new draws until this transaction ends. Raising is not undone by a rollback (a
    -- sequence never is), which only leaves numbers unused.
    CREATE FUNCTION ticket_numbers_reserve_through(tenant uuid, top integer) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE
      seq regclass := format('ticket_numbers.%I', tenant::text)::regclass;
    BEGIN
      EXECUTE format('ALTER SEQUENCE %s MINVALUE 1', seq);
      IF top > coalesce(pg_sequence_last_value(seq), 0) THEN
        PERFORM setval(seq, top);
      END IF;
    END $$;

    SELECT ticket_numbers_create(id) FROM tenants;
    SELECT setval(format('ticket_numbers.%I', tenant_id::text)::regclass, last_number)
      FROM ticket_counters WHERE last_number > 0;
    DROP TABLE ticket_counters;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE ticket_counters (
      tenant_id   uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      last_number integer NOT NULL
    );
    INSERT INTO ticket_counters (tenant_id, last_number)
      SELECT id, pg_sequence_last_value(format('ticket_numbers.%I', id::text)::regclass) FROM tenants
      WHERE pg_sequence_last_value(format('ticket_numbers.%I', id::text)::regclass) IS NOT NULL;
    DROP TRIGGER tenants_ticket_numbers ON tenants;
    DROP FUNCTION ticket_numbers_follow_tenant(), ticket_numbers_reserve_through(uuid, integer), ticket_numbers_create(uuid);
    DROP SCHEMA ticket_numbers CASCADE;
  `);
}
