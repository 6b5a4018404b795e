import type { Knex } from 'knex';

/**
 * The customer directory: organizations (with their email domains), teams and their members,
 * skills, consent records, and one address book of every user's primary and alternate emails.
 * Rule 2 as everywhere: tenant_id first in every primary key, unique index and foreign key.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE organizations (
      tenant_id      uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id             uuid NOT NULL,
      name           text NOT NULL,
      domains        text[] NOT NULL DEFAULT '{}',
      website        text,
      notes          text,
      custom_fields  jsonb NOT NULL DEFAULT '{}',
      -- Members may see each other's tickets (the customer portal's organization view).
      shares_tickets boolean NOT NULL DEFAULT false,
      created_at     timestamptz NOT NULL,
      updated_at     timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX organizations_name ON organizations (tenant_id, lower(name));

    -- One domain belongs to one organization per tenant: the key of the automatic link of new
    -- customers. Kept from organizations.domains by a trigger, so no write path can skip the rule.
    CREATE TABLE organization_domains (
      tenant_id       uuid NOT NULL,
      domain          text NOT NULL CHECK (domain = lower(domain)),
      organization_id uuid NOT NULL,
      PRIMARY KEY (tenant_id, domain),
      FOREIGN KEY (tenant_id, organization_id) REFERENCES organizations (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX organization_domains_org ON organization_domains (tenant_id, organization_id);

    CREATE FUNCTION organization_domains_sync() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM organization_domains WHERE tenant_id = NEW.tenant_id AND organization_id = NEW.id;
      INSERT INTO organization_domains (tenant_id, domain, organization_id)
        SELECT DISTINCT NEW.tenant_id, lower(d), NEW.id FROM unnest(NEW.domains) AS d;
      RETURN NULL;
    END $$;
    CREATE TRIGGER organization_domains_sync AFTER INSERT OR UPDATE OF domains ON organizations
      FOR EACH ROW EXECUTE FUNCTION organization_domains_sync();

    -- Earlier versions stored organization_id without organizations to point at.
    UPDATE users SET organization_id = NULL WHERE organization_id IS NOT NULL;
    ALTER TABLE users ADD CONSTRAINT users_organization
      FOREIGN KEY (tenant_id, organization_id) REFERENCES organizations (tenant_id, id) ON DELETE SET NULL (organization_id);
    CREATE INDEX users_organization ON users (tenant_id, organization_id) WHERE organization_id IS NOT NULL;

    -- Every address a user is reached at, primary and alternate: unique within a tenant, so an
    -- inbound mail or a requester email names one person. Kept from users by a trigger.
    CREATE TABLE user_emails (
      tenant_id  uuid NOT NULL,
      email      text NOT NULL CHECK (email = lower(email)),
      user_id    uuid NOT NULL,
      is_primary boolean NOT NULL,
      PRIMARY KEY (tenant_id, email),
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX user_emails_user ON user_emails (tenant_id, user_id);

    CREATE FUNCTION user_emails_sync() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM user_emails WHERE tenant_id = NEW.tenant_id AND user_id = NEW.id;
      INSERT INTO user_emails (tenant_id, email, user_id, is_primary)
        SELECT NEW.tenant_id, lower(NEW.email), NEW.id, true
        UNION
        SELECT NEW.tenant_id, lower(e), NEW.id, false FROM unnest(NEW.alternate_emails) AS e WHERE lower(e) <> lower(NEW.email);
      RETURN NULL;
    END $$;
    CREATE TRIGGER user_emails_sync AFTER INSERT OR UPDATE OF email, alternate_emails ON users
      FOR EACH ROW EXECUTE FUNCTION user_emails_sync();
    INSERT INTO user_emails (tenant_id, email, user_id, is_primary)
      SELECT tenant_id, lower(email), id, true FROM users ON CONFLICT DO NOTHING;
    INSERT INTO user_emails (tenant_id, email, user_id, is_primary)
      SELECT u.tenant_id, lower(e), u.id, false FROM users u, unnest(u.alternate_emails) AS e ON CONFLICT DO NOTHING;
    -- Earlier versions allowed an alternate address another user also held: the first holder keeps
    -- it, the others lose it, so every later write of those users passes the rule.
    UPDATE users u SET alternate_emails = coalesce((
        SELECT array_agg(e ORDER BY n) FROM unnest(u.alternate_emails) WITH ORDINALITY AS a(e, n)
        WHERE EXISTS (SELECT 1 FROM user_emails ue WHERE ue.tenant_id = u.tenant_id AND ue.email = lower(a.e) AND ue.user_id = u.id AND NOT ue.is_primary)
      ), '{}')
      WHERE cardinality(u.alternate_emails) > (SELECT count(*) FROM user_emails ue WHERE ue.tenant_id = u.tenant_id AND ue.user_id = u.id AND NOT ue.is_primary);

    CREATE TABLE teams (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      name        text NOT NULL,
      description text,
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX teams_name ON teams (tenant_id, lower(name));

    -- is_lead: SLA warnings of the team's tickets go to its leads.
    CREATE TABLE team_members (
      tenant_id  uuid NOT NULL,
      id         uuid NOT NULL,
      team_id    uuid NOT NULL,
      user_id    uuid NOT NULL,
      is_lead    boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      UNIQUE (tenant_id, team_id, user_id),
      FOREIGN KEY (tenant_id, team_id) REFERENCES teams (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX team_members_user ON team_members (tenant_id, user_id);

    CREATE TABLE skills (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      name        text NOT NULL,
      description text,
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX skills_name ON skills (tenant_id, lower(name));

    CREATE TABLE user_skills (
      tenant_id  uuid NOT NULL,
      id         uuid NOT NULL,
      user_id    uuid NOT NULL,
      skill_id   uuid NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      UNIQUE (tenant_id, user_id, skill_id),
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, skill_id) REFERENCES skills (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX user_skills_skill ON user_skills (tenant_id, skill_id);

    -- Consent is a history: each PUT appends the customer's answer for a channel; the newest wins.
    CREATE TABLE consent_records (
      tenant_id      uuid NOT NULL,
      id             uuid NOT NULL,
      user_id        uuid NOT NULL,
      channel        text NOT NULL,
      consent_status text NOT NULL CHECK (consent_status IN ('opted_in', 'opted_out')),
      notes          text,
      recorded_by    uuid,
      created_at     timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX consent_records_user ON consent_records (tenant_id, user_id, created_at DESC, id DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE consent_records, user_skills, skills, team_members, teams;
    DROP TRIGGER user_emails_sync ON users;
    DROP TABLE user_emails;
    DROP FUNCTION user_emails_sync();
    DROP INDEX users_organization;
    ALTER TABLE users DROP CONSTRAINT users_organization;
    DROP TABLE organization_domains, organizations;
    DROP FUNCTION organization_domains_sync();
  `);
}
