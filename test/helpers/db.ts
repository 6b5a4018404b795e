import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import { createDb, withDatabase } from '../../src/db/connection.js';
import { migrateLatest } from '../../src/db/migrations.js';

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
