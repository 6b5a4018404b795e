import t from 'tap';
import pg from 'pg';
import { testApp, tenantFixture } from '../../helpers/app.js';
import { SYSTEM_ACTOR } from '../../../src/core/context.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { recordEvent } from '../../../src/events/record.js';
import { registerEventConsumer } from '../../../src/events/consumers.js';
import { EventRecord } from '../../../src/events/models.js';

t.test('an event is stored in the change transaction, numbered and announced at commit', async (t) => {
  const env = await testApp(t);
  const [a, b] = [await tenantFixture(env), await tenantFixture(env)];
  const now = new Date('2026-11-23T10:00:00Z');

  const listener = new pg.Client({ connectionString: env.databaseUrl });
  await listener.connect();
  t.teardown(() => listener.end());
  const notices: string[] = [];
  listener.on('notification', (n) => notices.push(n.payload ?? ''));
  await listener.query('LISTEN helpdesk_events');

  const seen: string[] = [];
  registerEventConsumer('test-consumer', async (ctx, event) => {
    // A consumer runs inside the recording transaction: it sees the uncommitted row.
    const inside = await EventRecord.findIn(ctx, event.id);
    seen.push(`${event.type}:${inside ? 'visible' : 'missing'}`);
  });
  t.teardown(() => registerEventConsumer('test-consumer', async () => undefined));

  const event = await inTransaction(env.deps, { tenantId: a.id, actor: SYSTEM_ACTOR, now }, async (ctx) => {
    const recorded = await recordEvent(ctx, { type: 'ticket.status_changed', subjectType: 'ticket', ticketId: a.id, from: 'Open', to: 'Pending', data: { ticket_id: a.id, from: 'Open', to: 'Pending' } });
    t.equal(recorded.seq, null, 'no number before commit');
    return recorded;
  });
  t.same(seen, ['ticket.status_changed:visible']);
  const stored = await EventRecord.findIn({ trx: env.deps.db, tenantId: a.id }, event.id);
  t.ok(stored?.seq, 'numbered at commit');
  t.match(stored, { type: 'ticket.status_changed', from_value: 'Open', to_value: 'Pending', actor_name: 'System', data: { from: 'Open' } });
  t.equal(await EventRecord.findIn({ trx: env.deps.db, tenantId: b.id }, event.id), undefined, 'another tenant does not find it');

  await t.rejects(
    inTransaction(env.deps, { tenantId: a.id, actor: SYSTEM_ACTOR, now }, async (ctx) => {
      await recordEvent(ctx, { type: 'ticket.created', subjectType: 'ticket', data: {} });
      throw new Error('the change fails');
    }),
  );
  t.equal((await EventRecord.scoped({ trx: env.deps.db, tenantId: a.id })).length, 1, 'a rolled-back change leaves no event');

  for (let i = 0; i < 50 && notices.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  t.same(notices, [a.id], 'one NOTIFY with the tenant id, only for the committed change');
  t.same(env.guard.violations, []);
});
