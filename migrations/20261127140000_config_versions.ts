import type { Knex } from 'knex';

/**
 * A per-tenant version of the configuration every ticket write reads (statuses, priorities, SLA
 * policies and overrides, business hours, holidays, webhook endpoints, mail settings, notification
 * templates). Triggers bump it in the transaction of any change to those tables, however the change
 * is made, so a process may keep what it read under the version it read (src/db/config-cache.ts):
 * a write that sees the same version in its own transaction would read the same rows.
 *
 * No foreign key to tenants: the bump also runs while a tenant's rows are deleted with it; the
 * row of a tenant that no longer exists is not written again, and a stale one is harmless.
 */
const TABLES = ['statuses', 'priorities', 'sla_policies', 'sla_type_overrides', 'business_hours', 'holidays', 'webhook_endpoints', 'mail_settings', 'notification_templates'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE tenant_config_versions (
      tenant_id uuid PRIMARY KEY,
      version   bigint NOT NULL
    );
    CREATE FUNCTION config_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE t uuid;
    BEGIN
      IF TG_OP = 'DELETE' THEN t := OLD.tenant_id; ELSE t := NEW.tenant_id; END IF;
      IF EXISTS (SELECT 1 FROM tenants WHERE id = t) THEN
        INSERT INTO tenant_config_versions (tenant_id, version) VALUES (t, 1)
          ON CONFLICT (tenant_id) DO UPDATE SET version = tenant_config_versions.version + 1;
      END IF;
      RETURN NULL;
    END $$;
  `);
  for (const table of TABLES) {
    await knex.raw(`CREATE TRIGGER ${table}_config_version AFTER INSERT OR UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION config_version_bump()`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) await knex.raw(`DROP TRIGGER ${table}_config_version ON ${table}`);
  await knex.raw('DROP FUNCTION config_version_bump(); DROP TABLE tenant_config_versions;');
}
