import { readFileSync } from 'node:fs';
import { Args, Flags } from '@oclif/core';
import { BaseCommand, remoteFlags } from '../../src/cli/base-command.js';
import { remoteClient, withLocalBackend } from '../../src/cli/backend.js';
import { errors } from '../../src/core/errors.js';
import { applyLicense, type LicenseStatus } from '../../src/licensing/service.js';

export default class LicenseApply extends BaseCommand {
  static override summary = "Install a licence file for a tenant and show the tenant's licence status";
  static override description = 'Locally it needs --tenant. With --api-url and --token it goes through POST /api/v1/license, and the tenant is the token\'s (--tenant is then ignored).';
  static override examples = [
    '<%= config.bin %> license apply acme.lic --tenant acme',
    '<%= config.bin %> license apply acme.lic --api-url https://help.acme.test --token hdk_… --json',
  ];

  static override args = {
    file: Args.string({ description: 'Licence file (the signed licence text)', required: true }),
  };

  static override flags = {
    tenant: Flags.string({ description: 'Tenant slug (local mode)' }),
    ...remoteFlags,
  };

  async run(): Promise<LicenseStatus> {
    const { args, flags } = await this.parse(LicenseApply);
    const text = readLicense(args.file);
    const client = remoteClient(flags);
    let status: LicenseStatus;
    if (client) {
      status = await client.applyLicense<LicenseStatus>(text);
    } else {
      if (!flags.tenant) throw errors.invalid('tenant', 'is required without --api-url');
      const slug = flags.tenant;
      status = await withLocalBackend(async ({ tenant, inTenant }) => inTenant((await tenant(slug)).id, (ctx) => applyLicense(ctx, text)));
    }
    this.log(`Licence ${status.license_id ?? '(none)'} for ${status.customer ?? '(unknown)'}: ${status.edition}, ${status.status}`);
    this.log(`  modules: ${status.modules.join(', ') || '(none)'}; seats: ${status.seats ?? 'unlimited'}; expires: ${status.expires_at ?? 'never'}`);
    return status;
  }
}

function readLicense(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw errors.invalid('file', `cannot be read: ${(error as Error).message}`);
  }
}
