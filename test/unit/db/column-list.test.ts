import t from 'tap';
import knex from 'knex';
import { columnList } from '../../../src/db/column-list.js';
import { TICKET_OUT_COLUMNS } from '../../../src/tickets/output.js';

// A knex without a connection: only its compiler is used, to hold the fragment to knex's own quoting.
const compiler = knex({ client: 'pg' });
t.teardown(() => compiler.destroy());

t.test('quotes a list exactly as knex quotes select(...columns)', async (t) => {
  for (const columns of [TICKET_OUT_COLUMNS, ['id', 'subject'], ['users.notification_preferences']]) {
    const expected = compiler('tickets').select(...columns).toSQL().sql;
    t.equal(compiler('tickets').select(compiler.raw(columnList(columns))).toSQL().sql, expected, columns.join(','));
  }
  t.equal(columnList(['tickets.id', 'tickets.subject']), '"tickets"."id", "tickets"."subject"');
});

t.test('quotes a list once: the same array answers the same fragment', async (t) => {
  const columns = ['a.b', 'c'];
  const first = columnList(columns);
  t.equal(columnList(columns), first);
  t.equal(first, '"a"."b", "c"');
});

t.test('refuses what is not a plain column name, so nothing unquoted reaches the SQL', async (t) => {
  for (const bad of ['id; drop table tickets', 'Tickets.id', 'id as x', 'a.b.c', '"id"', '', '1id', 'tickets.*']) {
    t.throws(() => columnList([bad]), { message: /is not a plain column name/ }, JSON.stringify(bad));
  }
});
