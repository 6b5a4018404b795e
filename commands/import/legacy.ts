import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { withLocalBackend } from '../../src/cli/backend.js';
import { CLI_ACTOR } from '../../src/core/context.js';
import { RESULT_KEYS, runLegacyImport, type ImportResult } from '../../src/legacy-import/writer.js';
import { progressLine, progressModel } from '../../src/legacy-import/progress.js';

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
    parallel: Flags.integer({
      description: 'Batches of tickets and thread entries written side by side (1 is gentlest on a busy database)', default: 3, min: 1, max: 8,
    }),
  };

  async run(): Promise<ImportResult> {
    const { flags } = await this.parse(ImportLegacy);
    // Progress on stderr: a live ink view on a terminal, a plain line every few seconds
    // otherwise; nothing under --json, whose one document stays the only output.
    const tty = Boolean(process.stderr.isTTY) && !this.jsonEnabled();
    const plain = !tty && !this.jsonEnabled();
    const view = tty ? (await import('../../src/cli/views/import-progress.js')).startProgressView(process.stderr) : null;
    let totals: Record<string, number> = {};
    let lastLine = 0;
    let seconds = 0;
    const result = await withLocalBackend(async ({ deps, now, tenant }) => {
      const { id } = await tenant(flags.tenant);
      // Wall time for the rate and ETA only: the import itself runs at `now`.
      const started = performance.now();
      const out = await runLegacyImport(deps, id, CLI_ACTOR, now, {
        source: flags.source,
        timezone: flags['source-timezone'],
        dryRun: flags['dry-run'],
        parallel: flags.parallel,
        ...(flags['attachments-dir'] ? { attachmentsDir: flags['attachments-dir'] } : {}),
        onStart: (counts) => {
          totals = counts;
        },
        onProgress: view || plain ? (phase, so) => {
          const model = progressModel(totals, phase, so, performance.now() - started);
          if (view) view.update(model);
          else if (performance.now() - lastLine >= 5000) {
            lastLine = performance.now();
            process.stderr.write(`${progressLine(model)}\n`);
          }
        } : undefined,
      });
      seconds = (performance.now() - started) / 1000;
      view?.update(progressModel(totals, 'done', out, seconds * 1000));
      return out;
    }).finally(() => view?.stop());
    this.log(`${result.dry_run ? 'Dry run: would import' : 'Imported'} into tenant ${flags.tenant}:`);
    for (const key of RESULT_KEYS) this.log(`  ${key.padEnd(14)} ${String(result.counts[key]).padStart(8)} new  ${String(result.skipped[key]).padStart(8)} already imported`);
    this.log(`  in ${seconds.toFixed(1)} s: ${(result.counts.tickets / Math.max(seconds, 0.001)).toFixed(0)} new tickets/s`);
    if (result.errors.length) {
      this.log(`${result.errors.length} row(s) not imported:`);
      for (const e of result.errors.slice(0, 20)) this.log(`  ${e.kind} ${e.legacy_id}: ${e.message}`);
    }
    return result;
  }
}
