import type { Knex } from 'knex';

/**
 * Foundation schema: tenants, users, credentials, licences, the append-only audit log and job runs.
 * Rule 2: every tenant-owned table has tenant_id first in its primary key, unique indexes and
 * foreign keys, so no row can point at another tenant's row.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE tenants (
      id          uuid PRIMARY KEY,
      slug        text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9]){0,1}$'),
      name        text NOT NULL,
      seat_quota  integer CHECK (seat_quota IS NULL OR seat_quota >= 0),
      settings    jsonb NOT NULL DEFAULT '{}',
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL
    );

    -- Custom domains resolve a tenant from the Host header; a domain belongs to one tenant only.
    CREATE TABLE tenant_domains (
      domain      text PRIMARY KEY CHECK (domain = lower(domain)),
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      created_at  timestamptz NOT NULL
    );
    CREATE INDEX tenant_domains_tenant ON tenant_domains (tenant_id);

    CREATE TABLE users (
      tenant_id        uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id               uuid NOT NULL,
      email            text NOT NULL,
      name             text NOT NULL,
      role             text NOT NULL CHECK (role IN ('admin', 'agent', 'customer')),
      active           boolean NOT NULL DEFAULT true,
      password_hash    text,
      phone            text,
      notes            text,
      department       text,
      alternate_emails text[] NOT NULL DEFAULT '{}',
      custom_fields    jsonb NOT NULL DEFAULT '{}',
      is_vip           boolean NOT NULL DEFAULT false,
      max_concurrent_conversations integer,
      organization_id  uuid,
      avatar_url       text,
      timezone         text,
      locale           text,
      two_factor_enabled          boolean NOT NULL DEFAULT false,
      two_factor_secret_enc       text,
      two_factor_pending_secret_enc text,
      two_factor_last_step        bigint,
      invited_at       timestamptz,
      last_login_at    timestamptz,
      password_changed_at timestamptz,
      created_at       timestamptz NOT NULL,
      updated_at       timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX users_email ON users (tenant_id, lower(email));
    CREATE INDEX users_role ON users (tenant_id, role, active);

    CREATE TABLE sessions (
      tenant_id    uuid NOT NULL,
      id           uuid NOT NULL,
      user_id      uuid NOT NULL,
      token_hash   text NOT NULL,
      ip           text,
      user_agent   text,
      created_at   timestamptz NOT NULL,
      expires_at   timestamptz NOT NULL,
      last_used_at timestamptz,
      revoked_at   timestamptz,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );
    -- A bearer token decides its tenant, so the lookup by hash is the one cross-tenant read.
    CREATE INDEX sessions_token_hash ON sessions (token_hash);
    CREATE INDEX sessions_user ON sessions (tenant_id, user_id);

    CREATE TABLE api_keys (
      tenant_id    uuid NOT NULL,
      id           uuid NOT NULL,
      user_id      uuid NOT NULL,
      name         text NOT NULL,
      scopes       text[] NOT NULL,
      prefix       text NOT NULL,
      last4        text NOT NULL,
      token_hash   text NOT NULL,
      expires_at   timestamptz,
      last_used_at timestamptz,
      revoked_at   timestamptz,
      created_at   timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX api_keys_token_hash ON api_keys (token_hash);
    CREATE UNIQUE INDEX api_keys_prefix ON api_keys (tenant_id, prefix);

    -- Single-use tokens mailed to a user: password resets and invitations.
    CREATE TABLE user_tokens (
      tenant_id   uuid NOT NULL,
      id          uuid NOT NULL,
      user_id     uuid NOT NULL,
      purpose     text NOT NULL CHECK (purpose IN ('password_reset', 'invite')),
      token_hash  text NOT NULL,
      created_at  timestamptz NOT NULL,
      expires_at  timestamptz NOT NULL,
      used_at     timestamptz,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX user_tokens_hash ON user_tokens (tenant_id, token_hash);

    -- The second step of a login for users enrolled in 2FA.
    CREATE TABLE login_challenges (
      tenant_id       uuid NOT NULL,
      id              uuid NOT NULL,
      user_id         uuid NOT NULL,
      token_hash      text NOT NULL,
      failed_attempts integer NOT NULL DEFAULT 0,
      created_at      timestamptz NOT NULL,
      expires_at      timestamptz NOT NULL,
      used_at         timestamptz,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX login_challenges_hash ON login_challenges (tenant_id, token_hash);

    CREATE TABLE recovery_codes (
      tenant_id   uuid NOT NULL,
      id          uuid NOT NULL,
      user_id     uuid NOT NULL,
      code_hash   text NOT NULL,
      created_at  timestamptz NOT NULL,
      used_at     timestamptz,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX recovery_codes_user ON recovery_codes (tenant_id, user_id);

    -- Login throttling is counted in Postgres so that every daemon sees the same failures.
    CREATE TABLE login_attempts (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      email       text NOT NULL,
      ip          text,
      succeeded   boolean NOT NULL,
      created_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX login_attempts_email ON login_attempts (tenant_id, email, created_at);

    CREATE TABLE licenses (
      tenant_id    uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id           uuid NOT NULL,
      license_id   text NOT NULL,
      customer     text NOT NULL,
      edition      text NOT NULL CHECK (edition IN ('community', 'enterprise')),
      modules      text[] NOT NULL DEFAULT '{}',
      seats        integer,
      issued_at    timestamptz NOT NULL,
      expires_at   timestamptz,
      raw          text NOT NULL,
      installed_by uuid,
      installed_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX licenses_current ON licenses (tenant_id, installed_at DESC);

    CREATE TABLE audit_log (
      tenant_id     uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id            uuid NOT NULL,
      actor_type    text NOT NULL CHECK (actor_type IN ('user', 'api_key', 'system', 'cli')),
      actor_id      uuid,
      actor_name    text,
      action        text NOT NULL,
      resource_type text NOT NULL,
      resource_id   text,
      changes       jsonb NOT NULL DEFAULT '{}',
      ip            text,
      request_id    text,
      created_at    timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX audit_log_time ON audit_log (tenant_id, created_at DESC, id DESC);
    CREATE INDEX audit_log_resource ON audit_log (tenant_id, resource_type, resource_id);
    CREATE INDEX audit_log_actor ON audit_log (tenant_id, actor_id);

    -- Append-only: the database itself refuses to rewrite history.
    CREATE FUNCTION audit_log_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'audit_log is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
    END;
    $$;
    CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log
      FOR EACH ROW EXECUTE FUNCTION audit_log_immutable();
    CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
      FOR EACH STATEMENT EXECUTE FUNCTION audit_log_immutable();

    -- Instance-level record of background job runs (not tenant-owned: a run spans tenants).
    CREATE TABLE job_runs (
      id            uuid PRIMARY KEY,
      name          text NOT NULL,
      status        text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'skipped')),
      simulated_now timestamptz,
      started_at    timestamptz NOT NULL,
      finished_at   timestamptz,
      result        jsonb,
      error         text
    );
    CREATE INDEX job_runs_name ON job_runs (name, started_at DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE IF EXISTS job_runs, audit_log, licenses, login_attempts, recovery_codes, login_challenges,
      user_tokens, api_keys, sessions, users, tenant_domains, tenants CASCADE;
    DROP FUNCTION IF EXISTS audit_log_immutable();
  `);
}
