import type { Knex } from 'knex';

/**
 * A fingerprint of every table's content, to prove that a refused request wrote nothing: one
 * md5 per table over its rows as JSON. Some tables and columns change on purpose when a request
 * is refused, and are left out, each for a stated reason.
 */
export const CHANGES_ON_REFUSAL: Record<string, string> = {
  login_attempts: 'records failed sign-ins and password confirmations by design (the sign-in throttle)',
  knex_migrations: 'schema bookkeeping, not data',
  knex_migrations_lock: 'schema bookkeeping, not data',
};

export const COLUMNS_CHANGED_BY_AUTHENTICATION: Record<string, string[]> = {
  // Touched when a token is resolved, before the request can be refused (at most once a minute).
  sessions: ['last_used_at'],
  api_keys: ['last_used_at'],
};

/** Tables the database keeps append-only: their row count tells whether a row was added. */
export const APPEND_ONLY: Record<string, string> = {
  audit_log: 'the database refuses UPDATE, DELETE and TRUNCATE on it (the count stays cheap as it grows)',
};

export async function snapshotQuery(db: Knex): Promise<() => Promise<Record<string, string>>> {
  const tables = (await db('information_schema.tables').where({ table_schema: 'public', table_type: 'BASE TABLE' }).pluck('table_name') as string[])
    .filter((table) => !(table in CHANGES_ON_REFUSAL))
    .sort();
  const parts = tables.map((table) => {
    if (table in APPEND_ONLY) return `(select count(*)::text from "${table}") as "${table}"`;
    const without = (COLUMNS_CHANGED_BY_AUTHENTICATION[table] ?? []).map((column) => ` - '${column}'`).join('');
    return `(select md5(coalesce(string_agg(j, '|' order by j), '')) from (select (to_jsonb(r)${without})::text as j from "${table}" r) s) as "${table}"`;
  });
  const sql = `select ${parts.join(', ')}`;
  return async () => (await db.raw(sql)).rows[0] as Record<string, string>;
}

/**
 * A cheap first test of "nothing was written": a statement-level trigger on every fingerprinted
 * table advances a sequence on any INSERT, UPDATE, DELETE or TRUNCATE, whatever it touched and
 * whether or not it committed (sequences ignore rollbacks). An unchanged value proves that no
 * statement wrote to those tables; a changed one proves nothing, and the caller compares the full
 * fingerprints. Installed in the fuzz test's own database only.
 */
export async function writeCounter(db: Knex): Promise<() => Promise<string>> {
  const tables = (await db('information_schema.tables').where({ table_schema: 'public', table_type: 'BASE TABLE' }).pluck('table_name') as string[])
    .filter((table) => !(table in CHANGES_ON_REFUSAL));
  await db.raw(`
    CREATE SEQUENCE IF NOT EXISTS fuzz_statement_writes;
    CREATE OR REPLACE FUNCTION fuzz_count_write() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM nextval('fuzz_statement_writes'); RETURN NULL; END $$;
    ${tables.map((table) => `DROP TRIGGER IF EXISTS zz_fuzz_count_write ON "${table}";
    CREATE TRIGGER zz_fuzz_count_write AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "${table}"
      FOR EACH STATEMENT EXECUTE FUNCTION fuzz_count_write();`).join('\n')}`);
  return async () => String((await db.raw('SELECT last_value, is_called FROM fuzz_statement_writes')).rows.map((r: { last_value: string; is_called: boolean }) => `${r.last_value}:${r.is_called}`)[0]);
}
