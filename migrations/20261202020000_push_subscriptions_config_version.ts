import type { Knex } from 'knex';

/**
 * Whether a tenant has any push subscription is kept with its cached configuration
 * (src/db/config-cache.ts): a new ticket in a tenant without one then reads no staff for its
 * pushes. Subscribing and unsubscribing (a deleted user's subscriptions included, by cascade) bump
 * the tenant's configuration version like any configuration change. Updates cannot add or remove
 * a subscription, and the sender updates rows as it goes, so they bump nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TRIGGER push_subscriptions_config_version AFTER INSERT OR DELETE ON push_subscriptions
    FOR EACH ROW EXECUTE FUNCTION config_version_bump()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER push_subscriptions_config_version ON push_subscriptions');
}
