import type { Knex } from 'knex';

/**
 * Help-center branding (CONTRACT §19): one row per tenant, absent until the first change (the
 * defaults come from the tenant). `footer_html` is stored already sanitised. A change bumps the
 * tenant's configuration version, so notification mail rendered from the config cache sees it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE tenant_branding (
      tenant_id          uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      name               text,
      logo_url           text,
      primary_color      text,
      accent_color       text,
      help_center_title  text,
      support_email      text,
      footer_html        text,
      created_at         timestamptz NOT NULL,
      updated_at         timestamptz NOT NULL
    );
    CREATE TRIGGER tenant_branding_config_version AFTER INSERT OR UPDATE OR DELETE ON tenant_branding
      FOR EACH ROW EXECUTE FUNCTION config_version_bump();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE tenant_branding');
}
