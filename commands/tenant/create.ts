import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { withLocalBackend } from '../../src/cli/backend.js';
import { CLI_ACTOR } from '../../src/core/context.js';
import { createTenant } from '../../src/tenants/service.js';

/** CONTRACT §9: exactly `{tenant: {id, slug, name}, admin: {id, email}, api_key}` (+ a generated password). */
export interface TenantCreateResult {
  tenant: { id: string; slug: string; name: string };
  admin: { id: string; email: string };
  api_key: string;
  admin_password?: string;
}

export default class TenantCreate extends BaseCommand {
  static override summary = 'Create a tenant with its first administrator and an admin-scoped API key';
  static override examples = ['<%= config.bin %> tenant create --slug acme --name "Acme Inc." --admin-email it@acme.test --json'];

  static override flags = {
    slug: Flags.string({ description: 'URL-safe identifier: lowercase letters, digits, hyphens', required: true }),
    name: Flags.string({ description: 'Display name', required: true }),
    'admin-email': Flags.string({ description: 'Email of the first administrator', required: true }),
    'admin-password': Flags.string({ description: 'Password of the administrator (at least 12 characters); generated and printed when omitted' }),
  };

  async run(): Promise<TenantCreateResult> {
    const { flags } = await this.parse(TenantCreate);
    const created = await withLocalBackend(({ deps, now }) =>
      createTenant(deps, { slug: flags.slug, name: flags.name, adminEmail: flags['admin-email'], adminPassword: flags['admin-password'] ?? null }, CLI_ACTOR, now),
    );
    this.log(`Created tenant ${created.tenant.slug} (${created.tenant.id})`);
    this.log(`  administrator: ${created.admin.email} (${created.admin.id})`);
    if (created.admin_password) this.log(`  password:      ${created.admin_password}  (generated, shown only once)`);
    this.log(`  API key:       ${created.api_key}  (admin scope, shown only once)`);
    return {
      tenant: { id: created.tenant.id, slug: created.tenant.slug, name: created.tenant.name },
      admin: { id: created.admin.id, email: created.admin.email },
      api_key: created.api_key,
      ...(created.admin_password ? { admin_password: created.admin_password } : {}),
    };
  }
}
