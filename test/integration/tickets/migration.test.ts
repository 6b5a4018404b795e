import t from 'tap';
import { databaseMigratedTo } from '../../helpers/db.js';
import { randomUUID } from 'node:crypto';
import { migrateNext, migrateRollback } from '../../../src/db/migrations.js';

/**
 * The desk–directory links migration on a database that already holds tickets: team and
 * organization ids that point nowhere (the desk stored plain uuids before) are cleared, real ones
 * stay, and from then on the foreign keys refuse dangling ids and follow deletes with SET NULL.
 */
t.test('the desk-directory links migration keeps tickets and clears dangling links', async (t) => {
  const db = await databaseMigratedTo(t, '_desk');
  const now = new Date();
  const tenantId = randomUUID();
  const stamps = { created_at: now, updated_at: now };
  await db('tenants').insert({ id: tenantId, slug: 'legacy', name: 'Legacy', ...stamps });
  const [userId, statusId, priorityId, teamId, orgId] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  await db('users').insert({ tenant_id: tenantId, id: userId, email: 'c@example.com', name: 'C', role: 'customer', ...stamps });
  await db('statuses').insert({ tenant_id: tenantId, id: statusId, key: 'new', name: 'New', category: 'new', position: 1, ...stamps });
  await db('priorities').insert({ tenant_id: tenantId, id: priorityId, key: 'normal', name: 'Normal', position: 1, ...stamps });
  await db('teams').insert({ tenant_id: tenantId, id: teamId, name: 'Real team', ...stamps });
  await db('organizations').insert({ tenant_id: tenantId, id: orgId, name: 'Real org', ...stamps });
  const ticket = (n: number, team: string, org: string) => ({
    tenant_id: tenantId, id: randomUUID(), ticket_number: n, subject: `T${n}`, status_id: statusId, priority_id: priorityId,
    requester_id: userId, team_id: team, organization_id: org, channel: 'api', ...stamps,
  });
  const [linked, dangling] = [ticket(1, teamId, orgId), ticket(2, randomUUID(), randomUUID())];
  await db('tickets').insert([linked, dangling]);

  let applied: string | null;
  do applied = await migrateNext(db); while (applied && !applied.endsWith('_desk_directory_links'));
  t.ok(applied, 'the links migration ran');
  const rows = async () => (await db('tickets').where({ tenant_id: tenantId }).orderBy('ticket_number').select('team_id', 'organization_id'));
  t.same(await rows(), [{ team_id: teamId, organization_id: orgId }, { team_id: null, organization_id: null }], 'real links kept, dangling ones cleared');

  await t.rejects(db('tickets').where({ tenant_id: tenantId, id: linked.id }).update({ team_id: randomUUID() }), /tickets_team/);
  await db('teams').where({ tenant_id: tenantId, id: teamId }).delete();
  await db('organizations').where({ tenant_id: tenantId, id: orgId }).delete();
  t.same(await rows(), [{ team_id: null, organization_id: null }, { team_id: null, organization_id: null }], 'deletes set the link to null, the tickets stay');

  // Its own batch: a rollback undoes it alone, and it re-applies.
  t.match(await migrateRollback(db), [/_desk_directory_links$/]);
  await db('tickets').where({ tenant_id: tenantId, id: linked.id }).update({ team_id: randomUUID() });
  t.match(await migrateNext(db), /_desk_directory_links$/);
  t.same((await rows())[0], { team_id: null, organization_id: null });
});
