import t from 'tap';
import { walksOneIndex } from '../../../src/tickets/list.js';

t.test('a list is planned once only when one index serves its filters and sort exactly', async (t) => {
  t.ok(walksOneIndex('updated_at', ['status_id', 'priority_id']), 'the inbox: tickets_status_priority_updated');
  t.ok(walksOneIndex('updated_at', ['priority_id', 'status_id']), 'in any order');
  t.ok(walksOneIndex('updated_at', ['status_id']));
  t.ok(walksOneIndex('updated_at', []));
  for (const column of ['status_id', 'priority_id', 'type_id', 'assigned_agent_id', 'team_id', 'requester_id', 'channel']) {
    t.ok(walksOneIndex('created_at', [column]), `created_at by ${column}`);
  }
  t.ok(walksOneIndex('sla_due_at', []));
  t.ok(walksOneIndex('ticket_number', []));

  t.notOk(walksOneIndex('updated_at', ['priority_id']), 'no index leads with the priority for updated_at');
  t.notOk(walksOneIndex('created_at', ['status_id', 'priority_id']), 'two filters an index does not lead with');
  t.notOk(walksOneIndex('created_at', ['organization_id']), 'a partial index is left to the planner');
  t.notOk(walksOneIndex('ticket_number', ['status_id']), 'a filter the sort index does not hold');
  t.notOk(walksOneIndex('sla_due_at', ['status_id']));
});
