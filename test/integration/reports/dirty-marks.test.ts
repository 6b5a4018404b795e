import t from 'tap';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, deskRows } from '../../helpers/db.js';
import { createDb } from '../../../src/db/connection.js';

/**
 * The reports' ticket trigger marks hours dirty only for updates that change what the rollups
 * read (migration 20261129160000): a reply's `updated_at` and SLA clock bookkeeping mark nothing;
 * each report input, and an SLA outcome, marks the ticket's hours before and after.
 */
t.test('an update marks the ticket\'s hours only when a report input changed', async (t) => {
  const db = createDb(await createTestDatabase(t), { max: 1 });
  t.teardown(() => db.destroy());
  const created = new Date('2026-11-02T10:20:00Z');
  const stamps = { created_at: created, updated_at: created };
  const { tenantId, agents: [agentId, otherAgentId], customerId, status: { open, pending }, priority: { normal, high } } = await deskRows(db, created, 2);
  const ticketId = randomUUID();
  const sla = { first_response: { due_at: '2026-11-02T12:00:00Z' }, events: [] as unknown[] };
  await db('tickets').insert({
    tenant_id: tenantId, id: ticketId, ticket_number: 1, subject: 'T', status_id: open, priority_id: normal,
    requester_id: customerId, assigned_agent_id: agentId, channel: 'api', sla, ...stamps,
  });
  const ticket = () => db('tickets').where({ tenant_id: tenantId, id: ticketId });
  const marks = async () => {
    const rows = await db('report_rollup_dirty').where({ tenant_id: tenantId }).distinct('hour').orderBy('hour');
    await db('report_rollup_dirty').where({ tenant_id: tenantId }).delete();
    return rows.map((r: { hour: Date }) => r.hour.toISOString());
  };
  t.same(await marks(), ['2026-11-02T10:00:00.000Z'], 'a new ticket marks its creation hour');

  const later = new Date('2026-11-03T08:00:00Z');
  await ticket().update({ updated_at: later, subject: 'Renamed', tags: ['vip'], sla: { ...sla, events: [{ at: later.toISOString(), kind: 'agent_reply' }] }, sla_due_at: later });
  t.same(await marks(), [], 'updated_at, subject, tags and the SLA clock\'s bookkeeping mark nothing');

  const inputs: Array<[string, Record<string, unknown>]> = [
    ['status_id', { status_id: pending }],
    ['priority_id', { priority_id: high }],
    ['assigned_agent_id', { assigned_agent_id: otherAgentId }],
    ['channel', { channel: 'email' }],
    ['first_responded_at', { first_responded_at: later }],
    ['reopened_count', { reopened_count: 1 }],
  ];
  for (const [column, change] of inputs) {
    await ticket().update(change);
    t.same(await marks(), ['2026-11-02T10:00:00.000Z'], `${column} marks the creation hour`);
  }
  await ticket().update({ sla: { ...sla, first_response: { due_at: '2026-11-02T12:00:00Z', met_at: '2026-11-03T08:00:00Z' } } });
  t.same(await marks(), ['2026-11-02T10:00:00.000Z', '2026-11-03T08:00:00.000Z'], 'an SLA outcome marks the creation and outcome hours');
  await ticket().update({ resolved_at: new Date('2026-11-04T15:30:00Z') });
  t.same(await marks(), ['2026-11-02T10:00:00.000Z', '2026-11-03T08:00:00.000Z', '2026-11-04T15:00:00.000Z'],
    'a resolution marks every hour of the ticket after (and before) the change');
  await ticket().delete();
  t.same(await marks(), ['2026-11-02T10:00:00.000Z', '2026-11-03T08:00:00.000Z', '2026-11-04T15:00:00.000Z'], 'a deleted ticket marks its hours');
});
