import t from 'tap';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, deskRows } from '../../helpers/db.js';
import { createDb } from '../../../src/db/connection.js';

/**
 * The reply-gap trigger writes an appended reply's row directly and recomputes the ticket's
 * history for everything else (migration 20261129140000). Whatever path a statement takes, the
 * table must equal the gaps computed from scratch from the messages, and an appended reply must not
 * rewrite the rows before it. A seeded random walk of inserts (after the last reply, before it, at
 * the same instant with a smaller or larger id, by other or no authors, notes and customer
 * messages, several rows at once), updates and deletes checks both after every statement.
 */
const FROM_SCRATCH = `
  SELECT m.id AS message_id, m.ticket_id, m.author_id, m.created_at AS at,
         lag(m.created_at) OVER (PARTITION BY m.ticket_id ORDER BY m.created_at, m.id) AS prev_at,
         lag(m.created_at) OVER (PARTITION BY m.ticket_id, m.author_id ORDER BY m.created_at, m.id) AS prev_author_at,
         coalesce(bit_or(report_hour_bit(m.created_at)) OVER (PARTITION BY m.ticket_id ORDER BY m.created_at, m.id
                                                            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), repeat('0', 168)::bit(168))::text AS earlier_hours
    FROM messages m WHERE m.tenant_id = ? AND m.is_agent AND NOT m.is_private ORDER BY m.id`;
const KEPT = `
  SELECT message_id, ticket_id, author_id, at, prev_at, prev_author_at, earlier_hours::text AS earlier_hours, xmin::text AS version
    FROM report_reply_gaps WHERE tenant_id = ? ORDER BY message_id`;

/** A small deterministic generator (mulberry32), so a failure replays with its seed. */
function generator(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

t.test('the reply gaps equal the gaps computed from scratch after every kind of write', async (t) => {
  const db = createDb(await createTestDatabase(t), { max: 1 });
  t.teardown(() => db.destroy());
  const now = new Date('2026-11-01T00:00:00Z');
  const stamps = { created_at: now, updated_at: now };
  const { tenantId, agents, customerId, status, priority } = await deskRows(db, now, 3);
  const tickets = [randomUUID(), randomUUID(), randomUUID()];
  await db('tickets').insert(tickets.map((id, i) => ({
    tenant_id: tenantId, id, ticket_number: i + 1, subject: `T${i}`, status_id: status.open, priority_id: priority.normal,
    requester_id: customerId, channel: 'api', ...stamps,
  })));

  const random = generator(20261129);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  // Instants on a coarse grid over ten days, so that replies share instants and hours often.
  const instant = () => new Date(Date.UTC(2026, 9, 20) + Math.floor(random() * 480) * 30 * 60_000);
  const latestOf = async (ticketId: string): Promise<Date | null> =>
    ((await db('messages').where({ tenant_id: tenantId, ticket_id: ticketId, is_agent: true, is_private: false }).max({ at: 'created_at' }).first())?.at as Date | null) ?? null;
  const message = (ticketId: string, at: Date, extra: Record<string, unknown> = {}) => ({
    tenant_id: tenantId, id: randomUUID(), ticket_id: ticketId, body: 'x', author_id: pick([...agents, null]), author_name: 'A',
    is_agent: true, is_private: false, channel: 'api', created_at: at, ...extra,
  });

  let appended = 0;
  for (let step = 0; step < 300; step++) {
    const ticketId = pick(tickets);
    const roll = random();
    const before = new Map((await db.raw(KEPT, [tenantId])).rows.map((r: { message_id: string; version: string }) => [r.message_id, r.version]));
    let append = false;
    let what: string;
    if (roll < 0.45) {
      // After the ticket's last reply, or at its very instant (the id then decides the order).
      const latest = await latestOf(ticketId);
      const at = latest && random() < 0.3 ? latest : new Date((latest ?? instant()).getTime() + Math.floor(random() * 90) * 60_000);
      const row = message(ticketId, at);
      append = latest === null || at > latest;
      await db('messages').insert(row);
      what = 'a reply at or after the last';
    } else if (roll < 0.6) {
      await db('messages').insert(message(ticketId, instant()));
      what = 'a reply anywhere in the history';
    } else if (roll < 0.7) {
      await db('messages').insert(message(ticketId, instant(), pick([{ is_private: true }, { is_agent: false, author_id: customerId }])));
      what = 'a note or a customer message';
    } else if (roll < 0.8) {
      await db('messages').insert([message(ticketId, instant()), message(pick(tickets), instant()), message(ticketId, instant(), { is_private: true })]);
      what = 'several rows in one statement';
    } else if (roll < 0.9) {
      const victim = await db('messages').where({ tenant_id: tenantId, ticket_id: ticketId }).orderByRaw('random()').first('id');
      if (victim) await db('messages').where({ tenant_id: tenantId, id: victim.id }).update({ author_id: pick([...agents, null]), created_at: instant() });
      what = 'an update of a message';
    } else {
      const victim = await db('messages').where({ tenant_id: tenantId, ticket_id: ticketId }).orderByRaw('random()').first('id');
      if (victim) await db('messages').where({ tenant_id: tenantId, id: victim.id }).delete();
      what = 'a delete';
    }
    const kept = (await db.raw(KEPT, [tenantId])).rows as Array<Record<string, unknown> & { version: string; message_id: string }>;
    const want = (await db.raw(FROM_SCRATCH, [tenantId])).rows;
    const same = JSON.stringify(kept.map(({ version: _v, ...row }) => row)) === JSON.stringify(want);
    if (!same) {
      t.same(kept.map(({ version: _v, ...row }) => row), want, `step ${step}, ${what}: the gaps equal the history's`);
      return;
    }
    if (append) {
      appended++;
      const rewritten = kept.filter((row) => before.has(row.message_id) && before.get(row.message_id) !== row.version);
      if (rewritten.length) {
        t.fail(`step ${step}: an appended reply rewrote ${rewritten.length} earlier rows`);
        return;
      }
    }
  }
  t.ok(appended > 60, `the walk appended replies often (${appended} times)`);
  t.pass('300 statements: the gaps equal the history\'s after each, and no append rewrote an earlier row');
});
