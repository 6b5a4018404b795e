import type { Knex } from 'knex';

/**
 * Custom field definitions join the cached configuration (src/db/config-cache.ts): a ticket write
 * validates its values against the definitions cached under the configuration version it pinned,
 * instead of reading and share-locking the tenant's definitions in a statement of its own.
 *
 * The lock protected one thing a cache must not lose: a definition deleted while a write that
 * validated a value for it is still running would leave that value behind on a ticket. It is
 * replaced by a lock on the tenant's configuration, taken where the version is pinned:
 *
 * - `config_version_for_write(tenant)` takes the lock in share mode, then reads the version. A
 *   VOLATILE function runs each of its queries with a fresh snapshot, so a write that had to wait
 *   for a change pins the version that change committed, never the one before it. (PL/pgSQL
 *   rather than SQL: it keeps its query's plan for the session, where a SQL function plans its
 *   body at every call, 14 µs more than the subquery it replaces.)
 * - `config_lock_for_change(tenant)` takes it exclusively: a change that must not race a write's
 *   cached read (deleting a custom field) waits for the writes that pinned before it, and writes
 *   that pin after it wait for it to commit.
 *
 * The lock is a transaction-level advisory lock (class 1212962406, the tenant's hash): shared
 * holders do not block each other, and taking it writes nothing, where the share lock on the
 * definitions' rows wrote a multixact for each concurrent write.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TRIGGER custom_fields_config_version AFTER INSERT OR UPDATE OR DELETE ON custom_fields
      FOR EACH ROW EXECUTE FUNCTION config_version_bump();

    CREATE FUNCTION config_version_for_write(tenant uuid) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock_shared(1212962406, hashtext(tenant::text));
      RETURN (SELECT version FROM tenant_config_versions WHERE tenant_id = tenant);
    END $$;

    CREATE FUNCTION config_lock_for_change(tenant uuid) RETURNS void LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(1212962406, hashtext(tenant::text));
    END $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP FUNCTION config_lock_for_change(uuid), config_version_for_write(uuid);
    DROP TRIGGER custom_fields_config_version ON custom_fields;
  `);
}
