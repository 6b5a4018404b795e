import { BaseCommand } from '../../src/cli/base-command.js';
import { withLocalBackend } from '../../src/cli/backend.js';
import { listTenants, type TenantOut } from '../../src/tenants/service.js';

export default class TenantList extends BaseCommand {
  static override summary = 'List the tenants (JSON: an array of {id, slug, name, created_at})';
  static override examples = ['<%= config.bin %> tenant list --json'];

  async run(): Promise<TenantOut[]> {
    await this.parse(TenantList);
    const tenants = await withLocalBackend(({ deps }) => listTenants(deps.db));
    if (tenants.length === 0) this.log('No tenants yet: `helpdesk serve` creates "default" on first start, or use `helpdesk tenant create`.');
    for (const t of tenants) this.log(`${t.slug.padEnd(24)} ${t.name.padEnd(32)} ${t.id}  ${t.created_at}`);
    return tenants;
  }
}
