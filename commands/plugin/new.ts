import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { KINDS } from '../../src/extensions/manifest.js';
import { newPlugin, type NewPluginResult } from '../../src/extensions/toolchain.js';

export default class PluginNew extends BaseCommand {
  static override summary = 'Start a plugin project from the template of its kind';
  static override description = 'Writes a buildable AssemblyScript project: manifest.json, assembly/index.ts with a working example against a vendor API, assembly/helpers.ts, README.md and tests. Build it with `helpdesk plugin build DIR`.';
  static override examples = [
    '<%= config.bin %> plugin new acme-tasks --kind tasklist',
    '<%= config.bin %> plugin new crm-panel --kind context_tool --dir plugins/crm --vendor-host crm.example.com',
  ];

  static override args = {
    name: Args.string({ description: 'Plugin name (lower case; it names the plugin in routes)', required: true }),
  };

  static override flags = {
    kind: Flags.string({ description: 'Plugin kind', options: [...KINDS], required: true }),
    dir: Flags.string({ description: 'Project directory (default: ./NAME)' }),
    author: Flags.string({ description: 'Author written into the manifest' }),
    'vendor-host': Flags.string({ description: "The vendor API's host, allowed in scopes.http_hosts (default api.example.com)" }),
  };

  async run(): Promise<NewPluginResult> {
    const { args, flags } = await this.parse(PluginNew);
    const result = await newPlugin({ name: args.name, kind: flags.kind, dir: flags.dir, author: flags.author, vendorHost: flags['vendor-host'] });
    this.log(`Created a ${result.kind} plugin in ${result.dir}:`);
    for (const file of result.files) this.log(`  ${file}`);
    this.log(`Next: helpdesk plugin build ${result.dir}`);
    return result;
  }
}
