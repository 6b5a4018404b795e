import type { Knex } from 'knex';

/**
 * Outbound media (CONTRACT §17): a channel delivery may have several parts (the text, then one per
 * attachment). `parts` lists those the vendor already accepted (`"text"`, `"attachment:<id>"`) with
 * their external ids, so a retry re-sends only the parts not yet sent.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('channel_deliveries', (table) => {
    table.jsonb('parts').notNullable().defaultTo('[]');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('channel_deliveries', (table) => {
    table.dropColumn('parts');
  });
}
