import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../../src/cli/base-command.js';
import { withLocalBackend } from '../../../src/cli/backend.js';
import { removeDomain } from '../../../src/tenants/domains.js';

export default class TenantDomainRemove extends BaseCommand {
  static override summary = "Unbind a tenant's custom domain";
  static override examples = ['<%= config.bin %> tenant domain remove help.acme.com --tenant acme'];
  static override args = { domain: Args.string({ description: 'DNS name', required: true }) };
  static override flags = { tenant: Flags.string({ description: 'Tenant slug', required: true }) };

  async run(): Promise<{ removed: string }> {
    const { args, flags } = await this.parse(TenantDomainRemove);
    const result = await withLocalBackend(async ({ tenant, inTenant }) => inTenant((await tenant(flags.tenant)).id, (ctx) => removeDomain(ctx, args.domain)));
    this.log(`${result.removed} no longer resolves to tenant ${flags.tenant}`);
    return result;
  }
}
