import t from 'tap';
import { databaseMigratedTo } from '../../helpers/db.js';
import { randomUUID } from 'node:crypto';
import { migrateNext, migrateRollback } from '../../../src/db/migrations.js';

/**
 * The directory migration on a database that already holds users: organization ids that pointed
 * nowhere are cleared (the new foreign key needs it) and every address enters user_emails; where
 * two users shared an alternate address the first holder keeps it.
 */
t.test('the directory migration keeps existing users and their addresses', async (t) => {
  const db = await databaseMigratedTo(t, '_event_store');
  const now = new Date();
  const tenantId = randomUUID();
  await db('tenants').insert({ id: tenantId, slug: 'legacy', name: 'Legacy', created_at: now, updated_at: now });
  const [u1, u2] = [randomUUID(), randomUUID()];
  const user = (id: string, email: string, alternates: string[]) => ({
    tenant_id: tenantId, id, email, name: email, role: 'customer', alternate_emails: alternates, organization_id: randomUUID(), created_at: now, updated_at: now,
  });
  await db('users').insert([user(u1, 'one@example.com', ['shared@example.com', 'One@Example.com']), user(u2, 'two@example.com', ['shared@example.com'])]);

  t.match(await migrateNext(db), /_directory$/);
  const users = await db('users').where({ tenant_id: tenantId }).orderBy('email');
  t.same(users.map((u) => u.organization_id), [null, null], 'dangling organization ids cleared');
  const emails = await db('user_emails').where({ tenant_id: tenantId }).orderBy('email').select('email', 'user_id', 'is_primary');
  t.same(emails.map((e) => e.email), ['one@example.com', 'shared@example.com', 'two@example.com']);
  t.equal(emails.find((e) => e.email === 'shared@example.com')!.user_id, u1);
  t.same(users.map((u) => u.alternate_emails), [['shared@example.com'], []], 'the second holder loses the shared address; the own primary is not an alternate');
  // From now on the trigger keeps the table: a change of address moves its row.
  await db('users').where({ tenant_id: tenantId, id: u2 }).update({ email: 'Second@example.com' });
  t.ok(await db('user_emails').where({ tenant_id: tenantId, email: 'second@example.com', user_id: u2, is_primary: true }).first());
  t.notOk(await db('user_emails').where({ tenant_id: tenantId, email: 'two@example.com' }).first());

  // Each step above was its own batch, so a rollback undoes the directory migration alone, and it re-applies.
  t.match(await migrateRollback(db), [/_directory$/]);
  t.notOk((await db.raw("select to_regclass('user_emails') as t")).rows[0].t, 'its tables are gone');
  t.equal(Number((await db('users').where({ tenant_id: tenantId }).count({ n: '*' }))[0]!.n), 2, 'users stay');
  t.match(await migrateNext(db), /_directory$/);
});
