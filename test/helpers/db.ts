import { randomBytes, randomUUID } from 'node:crypto';
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

/**
 * The distinct hours the reports' triggers have marked dirty for the tenant (ISO strings, in
 * order), and the marks cleared, so that the next call shows only what came after.
 */
export async function takeDirtyHours(db: Knex, tenantId: string): Promise<string[]> {
  const rows = await db('report_rollup_dirty').where({ tenant_id: tenantId }).distinct('hour').orderBy('hour');
  await db('report_rollup_dirty').where({ tenant_id: tenantId }).delete();
  return rows.map((r: { hour: Date }) => r.hour.toISOString());
}

/** What `deskRows` wrote: a tenant, its agents and customer, two statuses and two priorities. */
export interface DeskRows {
  tenantId: string;
  agents: string[];
  customerId: string;
  status: { open: string; pending: string };
  priority: { normal: string; high: string };
}

/**
 * A tenant's desk written straight to the tables, all stamped `at`, for tests of triggers and
 * migrations that need rows but no service: `agents` agents, a customer, the statuses open and
 * pending, the priorities normal and high.
 */
export async function deskRows(db: Knex, at: Date, agents: number): Promise<DeskRows> {
  const stamps = { created_at: at, updated_at: at };
  const tenantId = randomUUID();
  await db('tenants').insert({ id: tenantId, slug: `t-${tenantId.slice(0, 8)}`, name: 'Desk', ...stamps });
  const rows: DeskRows = {
    tenantId,
    agents: Array.from({ length: agents }, () => randomUUID()),
    customerId: randomUUID(),
    status: { open: randomUUID(), pending: randomUUID() },
    priority: { normal: randomUUID(), high: randomUUID() },
  };
  await db('users').insert([
    ...rows.agents.map((id, i) => ({ tenant_id: tenantId, id, email: `a${i}@example.com`, name: `A${i}`, role: 'agent', ...stamps })),
    { tenant_id: tenantId, id: rows.customerId, email: 'c@example.com', name: 'C', role: 'customer', ...stamps },
  ]);
  await db('statuses').insert([
    { tenant_id: tenantId, id: rows.status.open, key: 'open', name: 'Open', category: 'open', position: 1, ...stamps },
    { tenant_id: tenantId, id: rows.status.pending, key: 'pending', name: 'Pending', category: 'pending', position: 2, ...stamps },
  ]);
  await db('priorities').insert([
    { tenant_id: tenantId, id: rows.priority.normal, key: 'normal', name: 'Normal', position: 1, ...stamps },
    { tenant_id: tenantId, id: rows.priority.high, key: 'high', name: 'High', position: 2, ...stamps },
  ]);
  return rows;
}
