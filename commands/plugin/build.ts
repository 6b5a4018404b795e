import { Args } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { buildPlugin, type BuildResult } from '../../src/extensions/toolchain.js';

export default class PluginBuild extends BaseCommand {
  static override summary = 'Compile a plugin project to DIR/dist/plugin.wasm and check it as an install would';
  static override description = 'Runs the AssemblyScript compiler with the Extism PDK shipped with Helpdesk (memory capped at 64 MiB), then checks manifest.json against the built module: every rule and every entrypoint export.';
  static override examples = ['<%= config.bin %> plugin build acme-tasks'];

  static override args = {
    dir: Args.string({ description: 'Plugin project directory', required: true }),
  };

  async run(): Promise<BuildResult> {
    const { args } = await this.parse(PluginBuild);
    const result = await buildPlugin(args.dir);
    this.log(`Built ${result.wasm} (${result.size} bytes, sha256 ${result.sha256.slice(0, 12)}…)`);
    this.log(`  exports: ${result.exports.join(', ')}`);
    return result;
  }
}
