import { BaseCommand } from '../../src/cli/base-command.js';
import { withLocalBackend } from '../../src/cli/backend.js';
import { showTable } from '../../src/cli/views/show-table.js';
import { listTenants, type TenantOut } from '../../src/tenants/service.js';

export default class TenantList extends BaseCommand {
  static override summary = 'List the tenants (JSON: an array of {id, slug, name, created_at})';
  static override examples = ['<%= config.bin %> tenant list --json'];

  async run(): Promise<TenantOut[]> {
    await this.parse(TenantList);
    const tenants = await withLocalBackend(({ deps }) => listTenants(deps.db));
    await showTable(
      {
        columns: [
          { header: 'SLUG', value: (t) => t.slug },
          { header: 'NAME', value: (t) => t.name },
          { header: 'ID', value: (t) => t.id },
          { header: 'CREATED', value: (t) => t.created_at },
        ],
        rows: tenants,
        plain: (t) => `${t.slug.padEnd(24)} ${t.name.padEnd(32)} ${t.id}  ${t.created_at}`,
        empty: 'No tenants yet: `helpdesk serve` creates "default" on first start, or use `helpdesk tenant create`.',
      },
      this,
    );
    return tenants;
  }
}
