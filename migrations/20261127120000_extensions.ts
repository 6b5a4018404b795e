import type { Knex } from 'knex';

/**
 * Extensions (SPEC "Extension (plugin) manifest", "Extensions"; CONTRACT §13).
 *
 * `extensions` holds one installed plugin per (tenant, name): its validated manifest, the SHA-256
 * of its module (the bytes live in the blob store under `extensions/<hash>.wasm`, shared by every
 * install of the same module), its plain configuration values and, encrypted as one document,
 * the values of its password-typed config fields. The inbound hook token is kept twice: hashed
 * for the token-in-path lookup (which decides the tenant) and encrypted so the hook URL can be
 * shown again. `extension_links` binds a ticket to one external record per extension.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE extensions (
      tenant_id        uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id               uuid NOT NULL,
      name             text NOT NULL,
      version          text NOT NULL,
      kind             text NOT NULL,
      description      text NOT NULL DEFAULT '',
      author           text NOT NULL DEFAULT '',
      enabled          boolean NOT NULL DEFAULT true,
      manifest         jsonb NOT NULL,
      module_sha256    text NOT NULL,
      module_size      integer NOT NULL,
      config           jsonb NOT NULL DEFAULT '{}',
      secrets_enc      text,
      hook_token_hash  text,
      hook_token_enc   text,
      created_at       timestamptz NOT NULL,
      updated_at       timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      UNIQUE (tenant_id, name)
    );
    -- The inbound hook resolves its tenant from the token: one instance-wide lookup by hash.
    CREATE UNIQUE INDEX extensions_hook_token ON extensions (hook_token_hash) WHERE hook_token_hash IS NOT NULL;
    CREATE INDEX extensions_list ON extensions (tenant_id, created_at, id);

    CREATE TABLE extension_links (
      tenant_id    uuid NOT NULL,
      ticket_id    uuid NOT NULL,
      extension_id uuid NOT NULL,
      external_id  text NOT NULL,
      created_at   timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, ticket_id, extension_id),
      FOREIGN KEY (tenant_id, ticket_id) REFERENCES tickets (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, extension_id) REFERENCES extensions (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX extension_links_extension ON extension_links (tenant_id, extension_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS extension_links; DROP TABLE IF EXISTS extensions;');
}
