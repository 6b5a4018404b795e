import { Flags } from '@oclif/core';
import { BaseCommand } from '../src/cli/base-command.js';
import { withLocalBackend } from '../src/cli/backend.js';
import { migrateLatest, migrateRollback, migrationStatus } from '../src/db/migrations.js';

export interface MigrateResult {
  applied?: string[];
  pending?: string[];
  migrated?: string[];
  rolled_back?: string[];
}

export default class Migrate extends BaseCommand {
  static override summary = 'Apply pending database migrations (or show or roll them back)';
  static override examples = ['<%= config.bin %> migrate', '<%= config.bin %> migrate --status --json', '<%= config.bin %> migrate --rollback'];

  static override flags = {
    status: Flags.boolean({ description: 'Only list applied and pending migrations', exclusive: ['rollback'] }),
    rollback: Flags.boolean({ description: 'Undo the last batch of migrations (not for production data)', exclusive: ['status'] }),
  };

  async run(): Promise<MigrateResult> {
    const { flags } = await this.parse(Migrate);
    return withLocalBackend(async ({ deps }) => {
      if (flags.status) {
        const status = await migrationStatus(deps.db);
        this.log(`Applied (${status.applied.length}):${list(status.applied)}`);
        this.log(`Pending (${status.pending.length}):${list(status.pending)}`);
        return { applied: status.applied, pending: status.pending };
      }
      if (flags.rollback) {
        const rolledBack = await migrateRollback(deps.db);
        this.log(rolledBack.length ? `Rolled back:${list(rolledBack)}` : 'Nothing to roll back');
        return { rolled_back: rolledBack };
      }
      const migrated = await migrateLatest(deps.db);
      this.log(migrated.length ? `Migrated:${list(migrated)}` : 'Already up to date');
      return { migrated };
    }, { requireMigrated: false });
  }
}

function list(names: string[]): string {
  return names.map((name) => `\n  ${name}`).join('');
}
