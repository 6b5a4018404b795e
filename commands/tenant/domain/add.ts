import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../../src/cli/base-command.js';
import { withLocalBackend } from '../../../src/cli/backend.js';
import { addDomain, type DomainOut } from '../../../src/tenants/domains.js';

export default class TenantDomainAdd extends BaseCommand {
  static override summary = "Bind a custom domain to a tenant: requests whose Host is that name resolve to it";
  static override examples = ['<%= config.bin %> tenant domain add help.acme.com --tenant acme --json'];
  static override args = { domain: Args.string({ description: 'DNS name, e.g. help.acme.com', required: true }) };
  static override flags = { tenant: Flags.string({ description: 'Tenant slug', required: true }) };

  async run(): Promise<DomainOut> {
    const { args, flags } = await this.parse(TenantDomainAdd);
    const added = await withLocalBackend(async ({ tenant, inTenant }) => inTenant((await tenant(flags.tenant)).id, (ctx) => addDomain(ctx, args.domain)));
    this.log(`${added.domain} now resolves to tenant ${flags.tenant}`);
    return added;
  }
}
