import type { Knex } from 'knex';

/**
 * Routing rules join the configuration every ticket write reads (migrations/20261127140000_config_versions.ts):
 * a change to them bumps the tenant's configuration version, so a create or update may take the
 * active rules of its trigger from the per-process configuration cache (src/db/config-cache.ts)
 * instead of reading them on every write.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE TRIGGER routing_rules_config_version AFTER INSERT OR UPDATE OR DELETE ON routing_rules FOR EACH ROW EXECUTE FUNCTION config_version_bump()');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER routing_rules_config_version ON routing_rules');
}
