import t from 'tap';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, deskRows, takeDirtyHours } from '../../helpers/db.js';
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
  const marks = () => takeDirtyHours(db, tenantId);
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

/**
 * Since migration 20261202010000 the update marks are row triggers with a WHEN condition: a change
 * of team, channel, assignee or priority also marks the hours of what the rollups attribute through
 * the ticket (its surveys, public staff replies, breach events, reply gaps), and only breach events
 * mark their own hour when written.
 */
t.test('a ticket\'s team and priority mark the hours of what hangs off the ticket; only breach events mark theirs', async (t) => {
  const db = createDb(await createTestDatabase(t), { max: 1 });
  t.teardown(() => db.destroy());
  const created = new Date('2026-11-02T10:20:00Z');
  const stamps = { created_at: created, updated_at: created };
  const { tenantId, agents: [agentId], customerId, status: { open }, priority: { normal, high } } = await deskRows(db, created, 1);
  const teamId = randomUUID();
  await db('teams').insert({ tenant_id: tenantId, id: teamId, name: 'Second line', ...stamps });
  const ticketId = randomUUID();
  await db('tickets').insert({
    tenant_id: tenantId, id: ticketId, ticket_number: 1, subject: 'T', status_id: open, priority_id: normal,
    requester_id: customerId, assigned_agent_id: agentId, channel: 'api', ...stamps,
  });
  const at = (iso: string) => new Date(iso);
  const message = (iso: string, isAgent: boolean, isPrivate = false) => ({
    tenant_id: tenantId, id: randomUUID(), ticket_id: ticketId, body: 'b', is_private: isPrivate, author_id: isAgent ? agentId : customerId,
    author_name: 'X', is_agent: isAgent, channel: 'api', created_at: at(iso),
  });
  await db('messages').insert(message('2026-11-02T11:05:00Z', false));
  await db('messages').insert(message('2026-11-02T13:10:00Z', true));
  await db('messages').insert(message('2026-11-02T14:15:00Z', true, true));
  await db('csat_surveys').insert({
    tenant_id: tenantId, id: randomUUID(), ticket_id: ticketId, token_hash: 'h', token_encrypted: 'e',
    created_at: at('2026-11-05T09:30:00Z'), expires_at: at('2026-12-05T09:30:00Z'), submitted_at: at('2026-11-06T16:45:00Z'), score: 5,
  });
  const event = (type: string, data: Record<string, unknown>) => ({
    tenant_id: tenantId, id: randomUUID(), type, ticket_id: ticketId, subject_type: 'ticket', subject_id: ticketId, data, created_at: created,
  });
  const marks = () => takeDirtyHours(db, tenantId);
  await marks();

  await db('events').insert(event('ticket.updated', { at: '2026-11-07T08:00:00Z' }));
  t.same(await marks(), [], 'an event that is no breach marks nothing');
  await db('events').insert(event('ticket.sla_breached', { at: '2026-11-07T20:59:00Z' }));
  t.same(await marks(), ['2026-11-07T20:00:00.000Z'], 'a breach event marks the hour of its instant');

  const ticket = () => db('tickets').where({ tenant_id: tenantId, id: ticketId });
  await ticket().update({ team_id: teamId });
  t.same(await marks(), [
    '2026-11-02T10:00:00.000Z', // the ticket's creation
    '2026-11-02T13:00:00.000Z', // its public staff reply (not the customer's message, not the note)
    '2026-11-05T09:00:00.000Z', '2026-11-06T16:00:00.000Z', // its survey, sent and answered
    '2026-11-07T20:00:00.000Z', // its breach
  ], 'a new team marks the ticket, its public staff replies, its survey and its breaches');

  await ticket().update({ priority_id: high });
  t.same(await marks(), [
    '2026-11-02T10:00:00.000Z', '2026-11-02T13:00:00.000Z', // the ticket; its reply gap (the staff reply)
    '2026-11-05T09:00:00.000Z', '2026-11-06T16:00:00.000Z', // its survey
  ], 'a new priority marks the ticket, its reply gaps and its survey');

  await ticket().update({ team_id: teamId, priority_id: high, updated_at: at('2026-11-08T00:00:00Z') });
  t.same(await marks(), [], 'setting the same team and priority again marks nothing');
});
