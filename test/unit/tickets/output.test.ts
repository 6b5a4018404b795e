import t from 'tap';
import { TICKET_OUT_COLUMNS, ticketOut } from '../../../src/tickets/output.js';
import type { Ticket } from '../../../src/tickets/models.js';

// The list and GET read only TICKET_OUT_COLUMNS; a column the representation reads but the list
// does not select would silently answer null or a default.
t.test('the representation reads only the columns the reads select', async (t) => {
  const read = new Set<string>();
  const row = new Proxy({} as Record<string, unknown>, {
    get(_target, key) {
      if (typeof key === 'string') read.add(key);
      return key.toString().endsWith('_at') || key === 'snoozed_until' ? new Date(0) : key === 'ticket_number' ? 1 : 'x';
    },
  });
  ticketOut(row as unknown as Ticket);
  const selected = new Set(TICKET_OUT_COLUMNS.map((column) => column.replace(/^tickets\./, '')));
  t.same([...read].filter((column) => !selected.has(column)), [], 'every column read is selected');
  t.same([...selected].filter((column) => !read.has(column)), [], 'nothing is selected that is not shown');
  t.notOk(selected.has('sla_state'), "the SLA engine's clock state is not read for answers");
});
