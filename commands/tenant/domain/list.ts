import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../src/cli/base-command.js';
import { withLocalBackend } from '../../../src/cli/backend.js';
import { showTable } from '../../../src/cli/views/show-table.js';
import { listDomains, type DomainOut } from '../../../src/tenants/domains.js';

export default class TenantDomainList extends BaseCommand {
  static override summary = "A tenant's custom domains (JSON: an array of {domain, tenant_id, created_at})";
  static override examples = ['<%= config.bin %> tenant domain list --tenant acme --json'];
  static override flags = { tenant: Flags.string({ description: 'Tenant slug', required: true }) };

  async run(): Promise<DomainOut[]> {
    const { flags } = await this.parse(TenantDomainList);
    const domains = await withLocalBackend(async ({ tenant, inTenant }) => inTenant((await tenant(flags.tenant)).id, (ctx) => listDomains(ctx)));
    await showTable(
      {
        columns: [
          { header: 'DOMAIN', value: (d) => d.domain },
          { header: 'ADDED', value: (d) => d.created_at },
        ],
        rows: domains,
        plain: (d) => `${d.domain.padEnd(40)} ${d.created_at}`,
        empty: `No custom domains for ${flags.tenant}: add one with \`helpdesk tenant domain add DOMAIN --tenant ${flags.tenant}\`.`,
      },
      this,
    );
    return domains;
  }
}
