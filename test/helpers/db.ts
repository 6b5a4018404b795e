import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import { createDb, withDatabase, type Knex } from '../../src/db/connection.js';
import { migrateLatest, migrateNext } from '../../src/db/migrations.js';

/**
 * A fresh database for one test file, cloned from the migrated template that `npm test` prepared
 * (HELPDESK_TEST_ADMIN_URL + HELPDESK_TEST_TEMPLATE); dropped when the test ends. Run directly
 * (`npx tap test/x.test.ts`) without the template, it migrates a new database itself.
 */
export async function createTestDatabase(t: Test): Promise<string> {
  const adminUrl = process.env.HELPDESK_TEST_ADMIN_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
  const template = process.env.HELPDESK_TEST_TEMPLATE;
  const name = `helpdesk_t_${randomBytes(6).toString('hex')}`;
  const admin = createDb(adminUrl, { max: 1 });
  await admin.raw(template ? `create database ${name} template ${template}` : `create database ${name}`);
  const url = withDatabase(adminUrl, name);
  if (!template) {
    const db = createDb(url, { max: 1 });
    await migrateLatest(db);
    await db.destroy();
  }
  t.teardown(async () => {
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.destroy();
  });
  return url;
}

/**
 * An empty database for a migration test, migrated one step at a time up to and including the
 * migration whose name ends with `lastSuffix` (e.g. `_desk`); dropped when the test ends.
 */
export async function databaseMigratedTo(t: Test, lastSuffix: string): Promise<Knex> {
  const adminUrl = process.env.HELPDESK_TEST_ADMIN_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
  const name = `helpdesk_m_${randomBytes(6).toString('hex')}`;
  const admin = createDb(adminUrl, { max: 1 });
  await admin.raw(`create database ${name}`);
  const db = createDb(withDatabase(adminUrl, name), { max: 1 });
  t.teardown(async () => {
    await db.destroy();
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.destroy();
  });
  for (;;) {
    const applied = await migrateNext(db);
    if (!applied) throw new Error(`no migration ending with ${lastSuffix} was reached`);
    if (applied.endsWith(lastSuffix)) return db;
  }
}
