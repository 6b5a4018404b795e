import { readFileSync } from 'node:fs';
import { Args, Flags } from '@oclif/core';
import { BaseCommand, remoteFlags } from '../../src/cli/base-command.js';
import { remoteClient, withLocalBackend } from '../../src/cli/backend.js';
import { errors } from '../../src/core/errors.js';
import { configureExtension, installExtension } from '../../src/extensions/service.js';
import type { ExtensionOut } from '../../src/extensions/schemas.js';

export default class PluginInstall extends BaseCommand {
  static override summary = 'Install a built plugin for a tenant (and set its configuration)';
  static override description = 'Locally it needs --tenant. With --api-url and --token it goes through POST /api/v1/extensions (and PATCH …/config), and the tenant is the token\'s. Password-typed config values are stored encrypted.';
  static override examples = [
    '<%= config.bin %> plugin install acme-tasks/dist/plugin.wasm --manifest acme-tasks/manifest.json --tenant acme --config base_url=https://tracker.example.com/api --config api_token=…',
    '<%= config.bin %> plugin install dist/plugin.wasm --manifest manifest.json --api-url https://help.acme.test --token hdk_… --json',
  ];

  static override args = {
    file: Args.string({ description: 'The built module (.wasm)', required: true }),
  };

  static override flags = {
    manifest: Flags.string({ description: 'The manifest file (JSON)', required: true }),
    config: Flags.string({ description: 'A configuration value KEY=VALUE (repeatable)', multiple: true }),
    tenant: Flags.string({ description: 'Tenant slug (local mode)' }),
    ...remoteFlags,
  };

  async run(): Promise<ExtensionOut> {
    const { args, flags } = await this.parse(PluginInstall);
    const module = readFileOr(args.file, 'file');
    let manifest: unknown;
    try {
      manifest = JSON.parse(readFileOr(flags.manifest, 'manifest').toString('utf8'));
    } catch (error) {
      if ((error as { code?: string }).code === 'validation_failed') throw error;
      throw errors.invalid('manifest', 'is not valid JSON');
    }
    const config: Record<string, string> = {};
    for (const pair of flags.config ?? []) {
      const at = pair.indexOf('=');
      if (at < 1) throw errors.invalid('config', `${pair} is not KEY=VALUE`);
      config[pair.slice(0, at)] = pair.slice(at + 1);
    }
    const client = remoteClient(flags);
    let ext: ExtensionOut;
    if (client) {
      ext = await client.request<ExtensionOut>('POST', '/extensions', { manifest, module_base64: module.toString('base64') });
      if (Object.keys(config).length) ext = await client.request<ExtensionOut>('PATCH', `/extensions/${ext.id}/config`, { config });
    } else {
      if (!flags.tenant) throw errors.invalid('tenant', 'is required without --api-url');
      const slug = flags.tenant;
      ext = await withLocalBackend(async ({ tenant, inTenant }) => inTenant((await tenant(slug)).id, async (ctx) => {
        const installed = await installExtension(ctx, { manifest, module: new Uint8Array(module) });
        return Object.keys(config).length ? configureExtension(ctx, installed.id, { config }) : installed;
      }));
    }
    this.log(`Installed ${ext.name} ${ext.version} (${ext.kind}) as ${ext.id}`);
    if (ext.hook_url) this.log(`  hook URL: ${ext.hook_url}`);
    return ext;
  }
}

function readFileOr(path: string, field: string): Buffer {
  try {
    return readFileSync(path);
  } catch {
    throw errors.invalid(field, `cannot read ${path}`);
  }
}
