import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import type { Knex } from 'knex';

/**
 * Migrations live in `migrations/` (compiled to `dist/migrations/`). knex records names with their
 * extension, so running `.ts` in development and `.js` when built would look like two histories;
 * this source strips the extension so both record the same name.
 */
const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

class StrippedExtensionSource implements Knex.MigrationSource<string> {
  async getMigrations(): Promise<string[]> {
    return readdirSync(MIGRATIONS_DIR)
      .filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts'))
      .sort();
  }
  getMigrationName(file: string): string {
    return file.replace(/\.(ts|js)$/, '');
  }
  async getMigration(file: string): Promise<Knex.Migration> {
    return import(pathToFileURL(join(MIGRATIONS_DIR, file)).href);
  }
}

const options = (): Knex.MigratorConfig => ({
  migrationSource: new StrippedExtensionSource(),
  tableName: 'knex_migrations',
});

export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest(options())) as [number, string[]];
  return applied;
}

/** Runs the next pending migration only; null when none is pending (tests of one migration's data). */
export async function migrateNext(db: Knex): Promise<string | null> {
  const [, applied] = (await db.migrate.up(options())) as [number, string[]];
  return applied[0] ?? null;
}

export async function migrateRollback(db: Knex): Promise<string[]> {
  const [, rolledBack] = (await db.migrate.rollback(options())) as [number, string[]];
  return rolledBack;
}

export interface MigrationStatus {
  applied: string[];
  pending: string[];
}

export async function migrationStatus(db: Knex): Promise<MigrationStatus> {
  // With a custom migration source, knex lists pending migrations as the source's own values
  // (here: file names), not as {file} objects.
  const [completed, pending] = (await db.migrate.list(options())) as [Array<{ name: string }>, string[]];
  const source = new StrippedExtensionSource();
  return {
    applied: completed.map((m) => m.name),
    pending: pending.map((file) => source.getMigrationName(file)),
  };
}
