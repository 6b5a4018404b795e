import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { withLocalBackend } from '../../src/cli/backend.js';
import { CLI_ACTOR } from '../../src/core/context.js';
import { RESULT_KEYS, runLegacyImport, type ImportResult } from '../../src/legacy-import/writer.js';

/** CONTRACT §12: `helpdesk import legacy --source DSN --tenant S [--dry-run] [--source-timezone TZ] [--json]`. */
export default class ImportLegacy extends BaseCommand {
  static override summary = 'Import an osTicket database into a tenant (idempotent, resumable)';
  static override examples = [
    '<%= config.bin %> import legacy --source "mysql://reader:secret@db.internal:3306/osticket?prefix=ost_" --tenant acme --dry-run',
    '<%= config.bin %> import legacy --source "mysql://reader:secret@db.internal/osticket" --tenant acme --source-timezone Europe/Berlin --json',
  ];

  static override flags = {
    source: Flags.string({ description: 'The osTicket database: mysql://user:pass@host:port/db[?prefix=ost_]', required: true }),
    tenant: Flags.string({ description: 'Tenant slug to import into', required: true }),
    'dry-run': Flags.boolean({ description: 'Read and map everything, write nothing; prints what would be created', default: false }),
    'source-timezone': Flags.string({ description: 'Time zone the source stores its dates in (IANA name)', default: 'UTC' }),
    'attachments-dir': Flags.string({ description: 'osTicket upload directory, for attachments stored on the filesystem' }),
  };

  async run(): Promise<ImportResult> {
    const { flags } = await this.parse(ImportLegacy);
    const tty = process.stderr.isTTY && !this.jsonEnabled();
    const result = await withLocalBackend(async ({ deps, now, tenant }) => {
      const { id } = await tenant(flags.tenant);
      const started = Date.now();
      return runLegacyImport(deps, id, CLI_ACTOR, now, {
        source: flags.source,
        timezone: flags['source-timezone'],
        dryRun: flags['dry-run'],
        ...(flags['attachments-dir'] ? { attachmentsDir: flags['attachments-dir'] } : {}),
        // A one-line progress view on a terminal: the phase, rows handled so far and the rate.
        onProgress: tty ? (phase, so) => {
          const done = RESULT_KEYS.reduce((n, k) => n + so.counts[k] + so.skipped[k], 0);
          const rate = done / Math.max(0.001, (Date.now() - started) / 1000);
          process.stderr.write(`\r${phase.padEnd(14)} ${String(done).padStart(9)} rows  ${rate.toFixed(0)} rows/s  ${so.errors.length} errors `);
        } : undefined,
      });
    });
    if (tty) process.stderr.write('\n');
    this.log(`${result.dry_run ? 'Dry run: would import' : 'Imported'} into tenant ${flags.tenant}:`);
    for (const key of RESULT_KEYS) this.log(`  ${key.padEnd(14)} ${String(result.counts[key]).padStart(8)} new  ${String(result.skipped[key]).padStart(8)} already imported`);
    if (result.errors.length) {
      this.log(`${result.errors.length} row(s) not imported:`);
      for (const e of result.errors.slice(0, 20)) this.log(`  ${e.kind} ${e.legacy_id}: ${e.message}`);
    }
    return result;
  }
}
