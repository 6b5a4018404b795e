import type { Knex } from 'knex';

/**
 * Announces changes to what a bearer token resolves to, so each daemon's credential cache
 * (src/auth/credential-cache.ts) forgets what it read: `NOTIFY helpdesk_credentials, '<tenant id>'`
 * from statement triggers, whoever writes (a daemon, the CLI, a job, plain SQL). The notification
 * leaves with the commit and not at all on a rollback, as NOTIFY does.
 *
 * The lookup (src/auth/tokens.ts) reads the credential (`sessions` or `api_keys`: hash, revocation,
 * expiry, scopes, owner), the owner's `users` row (active, role, custom role, and the whole row,
 * which GET /auth/me answers from) and the custom role's `roles` row (its permission matrix).
 * `tenants` is not read today; its trigger covers a tenant's deletion explicitly (the cascade into
 * users and credentials also announces it) and any tenant-wide state a lookup may read later.
 *
 * - UPDATE and DELETE: one notification per tenant whose rows changed. An UPDATE that changes only
 *   `last_used_at` (the throttled "last used" touch of every lookup) announces nothing: the lookup
 *   does not depend on it, and announcing it would empty the tenant's cache once a minute per
 *   credential. An UPDATE that sets columns to the values they had announces nothing either.
 * - TRUNCATE: `*`, every tenant.
 * - INSERT: nothing. A cache holds only tokens that resolved, and a new row cannot change how an
 *   existing token resolves: the lookup joins users and roles on their primary keys, which an
 *   existing credential or user already references (foreign keys), and a new credential has a new
 *   random hash. (An upsert's UPDATE part fires the UPDATE trigger.)
 *
 * Statement-level, with transition tables: a bulk change costs one trigger call, and a tenant is
 * named once per transaction however many rows changed (PostgreSQL folds identical notifications).
 */
const TABLES: Array<{ table: string; tenantColumn: string; ignored: string[] }> = [
  { table: 'sessions', tenantColumn: 'tenant_id', ignored: ['last_used_at'] },
  { table: 'api_keys', tenantColumn: 'tenant_id', ignored: ['last_used_at'] },
  { table: 'users', tenantColumn: 'tenant_id', ignored: [] },
  { table: 'roles', tenantColumn: 'tenant_id', ignored: [] },
  { table: 'tenants', tenantColumn: 'id', ignored: [] },
];

const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

export async function up(knex: Knex): Promise<void> {
  // Arguments: the column holding the tenant id, then the columns whose changes do not count.
  await knex.raw(`
    CREATE FUNCTION credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      tenant_column text := TG_ARGV[0];
      ignored_columns text[] := coalesce(TG_ARGV[1:], '{}');
    BEGIN
      IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('helpdesk_credentials', '*');
      ELSIF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('helpdesk_credentials', d.tenant)
          FROM (SELECT DISTINCT to_jsonb(o) ->> tenant_column AS tenant FROM old_rows o) d;
      ELSE
        -- Rows as they were and as they are, less the ignored columns: a row found on one side
        -- only is a change that counts (its tenant, before or after, is named).
        PERFORM pg_notify('helpdesk_credentials', d.tenant)
          FROM (
            SELECT DISTINCT changed.r ->> tenant_column AS tenant FROM (
              (SELECT to_jsonb(n) - ignored_columns AS r FROM new_rows n
               EXCEPT ALL SELECT to_jsonb(o) - ignored_columns FROM old_rows o)
              UNION ALL
              (SELECT to_jsonb(o) - ignored_columns FROM old_rows o
               EXCEPT ALL SELECT to_jsonb(n) - ignored_columns FROM new_rows n)
            ) changed
          ) d;
      END IF;
      RETURN NULL;
    END $$;
  `);
  for (const { table, tenantColumn, ignored } of TABLES) {
    const args = [tenantColumn, ...ignored].map(literal).join(', ');
    await knex.raw(`
      CREATE TRIGGER ${table}_credentials_upd AFTER UPDATE ON ${table}
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION credentials_changed(${args});
      CREATE TRIGGER ${table}_credentials_del AFTER DELETE ON ${table}
        REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION credentials_changed(${args});
      CREATE TRIGGER ${table}_credentials_trunc AFTER TRUNCATE ON ${table}
        FOR EACH STATEMENT EXECUTE FUNCTION credentials_changed(${args});
    `);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const { table } of TABLES) {
    await knex.raw(`
      DROP TRIGGER ${table}_credentials_upd ON ${table};
      DROP TRIGGER ${table}_credentials_del ON ${table};
      DROP TRIGGER ${table}_credentials_trunc ON ${table};
    `);
  }
  await knex.raw('DROP FUNCTION credentials_changed()');
}
