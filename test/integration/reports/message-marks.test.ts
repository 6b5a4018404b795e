import t from 'tap';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createTestDatabase, databaseMigratedTo, deskRows, takeDirtyHours } from '../../helpers/db.js';
import { createDb } from '../../../src/db/connection.js';
import { migrateNext, migrateRollback } from '../../../src/db/migrations.js';

/**
 * A new message's report work is one row trigger with a WHEN condition (migration
 * 20261204010000): a customer message or a note runs no report code; a public staff reply marks
 * its own hour and its ticket's creation hour, and writes its reply gap. The reply gaps' own
 * equality with a from-scratch computation, for every kind of insert, is in reply-gaps.test.ts.
 */
const created = new Date('2026-11-02T10:20:00Z');

async function desk(db: Knex) {
  const { tenantId, agents: [agentId], customerId, status: { open }, priority: { normal } } = await deskRows(db, created, 1);
  const ticketId = randomUUID();
  await db('tickets').insert({
    tenant_id: tenantId, id: ticketId, ticket_number: 1, subject: 'T', status_id: open, priority_id: normal,
    requester_id: customerId, channel: 'api', created_at: created, updated_at: created,
  });
  const message = (iso: string, kind: 'customer' | 'note' | 'reply') => ({
    tenant_id: tenantId, id: randomUUID(), ticket_id: ticketId, body: 'b', is_private: kind === 'note',
    author_id: kind === 'customer' ? customerId : agentId, author_name: 'X', is_agent: kind !== 'customer', channel: 'api',
    created_at: new Date(iso),
  });
  const marks = () => takeDirtyHours(db, tenantId);
  const gaps = async () => (await db('report_reply_gaps').where({ tenant_id: tenantId }).orderBy('at').select('message_id', 'prev_at'))
    .map((g: { message_id: string; prev_at: Date | null }) => ({ message_id: g.message_id, prev_at: g.prev_at?.toISOString() ?? null }));
  await marks();
  return { message, marks, gaps };
}

/** Whether the reply-gap statement function still holds its INSERT-only append path. */
async function syncAppends(db: Knex): Promise<boolean> {
  const { rows } = await db.raw(`SELECT prosrc FROM pg_proc WHERE proname = 'report_reply_gaps_sync'`);
  return (rows[0].prosrc as string).includes('INSERT INTO report_reply_gaps');
}

/** The INSERT triggers of `messages` that capture the statement's new rows as a transition table. */
async function insertTransitionTriggers(db: Knex): Promise<string[]> {
  const { rows } = await db.raw(`SELECT tgname FROM pg_trigger
    WHERE tgrelid = 'messages'::regclass AND NOT tgisinternal AND tgtype & 4 <> 0 AND tgnewtable IS NOT NULL ORDER BY tgname`);
  return rows.map((r: { tgname: string }) => r.tgname);
}

t.test('only a public staff reply marks hours and writes a reply gap', async (t) => {
  const db = createDb(await createTestDatabase(t), { max: 1 });
  t.teardown(() => db.destroy());
  const { message, marks, gaps } = await desk(db);
  t.same(await insertTransitionTriggers(db), [], 'no INSERT trigger of messages captures a transition table');

  await db('messages').insert(message('2026-11-02T11:05:00Z', 'customer'));
  await db('messages').insert(message('2026-11-02T12:10:00Z', 'note'));
  t.same(await marks(), [], 'a customer message and a note mark nothing');
  t.same(await gaps(), [], 'and write no reply gap');

  const first = message('2026-11-03T09:15:00Z', 'reply');
  await db('messages').insert(first);
  t.same(await marks(), ['2026-11-02T10:00:00.000Z', '2026-11-03T09:00:00.000Z'], 'a staff reply marks its ticket\'s creation hour and its own');
  t.same(await gaps(), [{ message_id: first.id, prev_at: null }], 'and writes its gap, the first of the ticket');

  // Two replies in one statement, the later one first: each sees both in messages.
  const [late, early] = [message('2026-11-04T16:30:00Z', 'reply'), message('2026-11-04T08:45:00Z', 'reply')];
  await db('messages').insert([late, early]);
  t.same(await marks(), ['2026-11-02T10:00:00.000Z', '2026-11-04T08:00:00.000Z', '2026-11-04T16:00:00.000Z'],
    'two replies in one statement mark their hours and the ticket\'s');
  t.same(await gaps(), [
    { message_id: first.id, prev_at: null },
    { message_id: early.id, prev_at: '2026-11-03T09:15:00.000Z' },
    { message_id: late.id, prev_at: '2026-11-04T08:45:00.000Z' },
  ], 'their gaps follow the reply order, not the order of the statement\'s rows');
});

t.test('the migration rolls back alone to the statement triggers, and applies again', async (t) => {
  const db = await databaseMigratedTo(t, '_report_message_row_triggers');
  t.match(await migrateRollback(db), [/_report_message_row_triggers$/]);
  t.same(await insertTransitionTriggers(db), ['report_dirty_agent_messages_ins', 'report_dirty_messages_ins', 'report_reply_gaps_ins'],
    'the three statement triggers are back');
  t.ok(await syncAppends(db), 'with the reply-gap function\'s append path');
  const before = await desk(db);
  const reply = before.message('2026-11-03T09:15:00Z', 'reply');
  await db('messages').insert([before.message('2026-11-02T11:05:00Z', 'customer'), reply]);
  t.same(await before.marks(), ['2026-11-02T10:00:00.000Z', '2026-11-03T09:00:00.000Z'], 'and mark the reply\'s hours');
  t.same(await before.gaps(), [{ message_id: reply.id, prev_at: null }], 'and write its gap');

  t.match(await migrateNext(db), /_report_message_row_triggers$/);
  t.same(await insertTransitionTriggers(db), [], 'applied again, the row trigger replaces them');
  t.notOk(await syncAppends(db), 'and the reply-gap function, left to updates and deletes, has no append path');
  const after = await desk(db);
  await db('messages').insert(after.message('2026-11-03T09:15:00Z', 'reply'));
  t.same(await after.marks(), ['2026-11-02T10:00:00.000Z', '2026-11-03T09:00:00.000Z'], 'and marks the reply\'s hours');
});
