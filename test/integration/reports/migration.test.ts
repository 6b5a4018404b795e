import t from 'tap';
import { randomUUID } from 'node:crypto';
import { databaseMigratedTo } from '../../helpers/db.js';
import { migrateNext, migrateRollback } from '../../../src/db/migrations.js';

/**
 * The reply bucket rollups migration on a database that already holds replies: every reply-gap row
 * gets the hours of the week of its ticket's earlier public staff replies, the rollups restart
 * from nothing, and from then on the trigger keeps the hours and marks the hours of replies whose
 * previous reply or earlier hours change. It rolls back alone and applies again.
 */
const hourOfWeek = (iso: string) => Math.floor(Date.parse(iso) / 3_600_000) % 168;

t.test('the reply bucket rollups migration fills earlier_hours and keeps it from then on', async (t) => {
  const db = await databaseMigratedTo(t, '_routing_rules_config_version');
  const now = new Date('2026-11-01T00:00:00Z');
  const stamps = { created_at: now, updated_at: now };
  const tenantId = randomUUID();
  await db('tenants').insert({ id: tenantId, slug: 'older', name: 'Older', ...stamps });
  const [agentId, customerId, statusId, priorityId] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  await db('users').insert([
    { tenant_id: tenantId, id: agentId, email: 'a@example.com', name: 'A', role: 'agent', ...stamps },
    { tenant_id: tenantId, id: customerId, email: 'c@example.com', name: 'C', role: 'customer', ...stamps },
  ]);
  await db('statuses').insert({ tenant_id: tenantId, id: statusId, key: 'open', name: 'Open', category: 'open', position: 1, ...stamps });
  await db('priorities').insert({ tenant_id: tenantId, id: priorityId, key: 'normal', name: 'Normal', position: 1, ...stamps });
  const ticketId = randomUUID();
  await db('tickets').insert({
    tenant_id: tenantId, id: ticketId, ticket_number: 1, subject: 'T', status_id: statusId, priority_id: priorityId,
    requester_id: customerId, channel: 'api', ...stamps,
  });
  const message = (at: string, extra: Record<string, unknown> = {}) => ({
    tenant_id: tenantId, id: randomUUID(), ticket_id: ticketId, body: 'x', author_id: agentId, author_name: 'A',
    is_agent: true, is_private: false, channel: 'api', created_at: new Date(at), ...extra,
  });
  // Three public staff replies, a private note between them (not a reply), on two days.
  const replies = ['2026-10-21T11:00:00Z', '2026-10-21T11:40:00Z', '2026-10-22T09:15:00Z'];
  await db('messages').insert([message(replies[0]!), message(replies[1]!), message('2026-10-21T12:00:00Z', { is_private: true }), message(replies[2]!)]);
  await db('report_rollup_state').insert({ tenant_id: tenantId, rolled_until: now });

  t.match(await migrateNext(db), /_report_reply_bucket_rollups$/);
  // Each row's earlier hours, as the positions of its set bits.
  const hours = async () => (await db.raw(`
    SELECT g.at, array(SELECT i FROM generate_series(0, 167) i WHERE get_bit(g.earlier_hours, i) = 1) AS bits
      FROM report_reply_gaps g WHERE g.tenant_id = ? ORDER BY g.at`, [tenantId])).rows.map((r: { bits: number[] }) => r.bits);
  const [h0, , h2] = replies.map(hourOfWeek);
  t.same(await hours(), [[], [h0], [h0]], 'filled: the first reply none, the next two the first one\'s hour of the week (both earlier ones at 11:xx UTC)');
  t.equal((await db('report_rollup_state').where({ tenant_id: tenantId })).length, 0, 'the rollups restart from the first ticket');
  t.same(await db('report_rollup_reply_hours').count({ n: '*' }).first(), { n: '0' });

  // A reply written before the others: their previous reply or earlier hours change, and their
  // hours are marked dirty; a reply after the last one changes no other row and marks nothing more.
  await db('report_rollup_dirty').delete();
  await db('messages').insert(message('2026-10-20T09:30:00Z'));
  const h9 = hourOfWeek('2026-10-20T09:30:00Z');
  t.same(await hours(), [[], [h9], [h9, h0].sort((a, b) => a - b), [h9, h0].sort((a, b) => a - b)], 'the trigger keeps earlier_hours');
  const marked = async () => (await db('report_rollup_dirty').where({ tenant_id: tenantId }).distinct('hour').orderBy('hour')).map((r: { hour: Date }) => r.hour.toISOString());
  t.same(await marked(), ['2026-10-20T09:00:00.000Z', '2026-10-21T11:00:00.000Z', '2026-10-22T09:00:00.000Z', '2026-11-01T00:00:00.000Z'],
    'the new reply\'s hour and its ticket\'s creation hour (the other rollups\' triggers), the first reply of the 21st (its previous reply appeared) and the 22nd\'s (only its earlier hours changed)');
  await db('report_rollup_dirty').delete();
  await db('messages').insert(message('2026-10-22T15:00:00Z'));
  t.same(await marked(), ['2026-10-22T15:00:00.000Z', '2026-11-01T00:00:00.000Z'], 'a reply after the last: its own hour and the creation hour only');

  // Its own batch: a rollback removes the column and the tables alone, and it applies again.
  t.match(await migrateRollback(db), [/_report_reply_bucket_rollups$/]);
  t.notOk(await db.schema.hasColumn('report_reply_gaps', 'earlier_hours'));
  t.notOk(await db.schema.hasTable('report_rollup_reply_totals'));
  await db('messages').insert(message('2026-10-23T08:00:00Z'));
  t.equal((await db('report_reply_gaps').where({ tenant_id: tenantId })).length, 6, 'the earlier trigger keeps the gaps without the hours');
  t.match(await migrateNext(db), /_report_reply_bucket_rollups$/);
  const h15 = hourOfWeek('2026-10-22T15:00:00Z');
  t.same((await hours())[5], [h9, h0, h2, h15].sort((a, b) => a - b), 'filled again, for the row written in between too');
});
