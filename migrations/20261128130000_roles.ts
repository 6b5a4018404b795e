import type { Knex } from 'knex';

/**
 * Custom roles (RBAC module, CONTRACT §19). A role is a named permission matrix
 * `{<resource>: ["list" | "view" | "edit" | "delete"]}`; a user holding one keeps `role = 'agent'`
 * (staff, a seat) and `custom_role_id` points at it. The foreign key refuses to delete a role that
 * a user still holds.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE roles (
      tenant_id    uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id           uuid NOT NULL,
      name         text NOT NULL,
      description  text NOT NULL DEFAULT '',
      permissions  jsonb NOT NULL DEFAULT '{}',
      created_at   timestamptz NOT NULL,
      updated_at   timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX roles_tenant_name ON roles (tenant_id, lower(name));

    ALTER TABLE users ADD COLUMN custom_role_id uuid;
    ALTER TABLE users ADD CONSTRAINT users_custom_role_fk
      FOREIGN KEY (tenant_id, custom_role_id) REFERENCES roles (tenant_id, id) ON DELETE RESTRICT;
    ALTER TABLE users ADD CONSTRAINT users_custom_role_staff CHECK (custom_role_id IS NULL OR role = 'agent');
    CREATE INDEX users_custom_role ON users (tenant_id, custom_role_id) WHERE custom_role_id IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE users DROP COLUMN custom_role_id;
    DROP TABLE roles;
  `);
}
