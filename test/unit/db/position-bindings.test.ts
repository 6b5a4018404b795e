import t from 'tap';
import knex from 'knex';
import { HelpdeskPgClient } from '../../../src/db/pg-client.js';

// Without a connection: only the client's placeholder positioning is used, held to knex's own.
const ours = knex({ client: HelpdeskPgClient as never });
const plain = knex({ client: 'pg' });
t.teardown(async () => { await ours.destroy(); await plain.destroy(); });
const position = (db: typeof ours, sql: string) => (db.client as { positionBindings(sql: string): string }).positionBindings(sql);

t.test('positions placeholders exactly as knex does, escaped ones included, on every call', async (t) => {
  const texts = [
    'select * from "t" where "a" = ? and "b" = ?',
    'select ?::jsonb \\? \'k\' as has, ? as n',
    'select 1',
    `insert into "t" (${Array.from({ length: 40 }, (_, i) => `"c${i}"`).join(', ')}) values (${Array(40).fill('?').join(', ')})`,
  ];
  for (const sql of texts) {
    const expected = position(plain, sql);
    t.equal(position(ours, sql), expected, `first: ${sql.slice(0, 30)}`);
    // The second answer comes from what the first kept; a text built anew is the same key.
    t.equal(position(ours, `${sql}`.split('').join('')), expected, `again: ${sql.slice(0, 30)}`);
  }
  t.equal(position(ours, 'select ? , ?'), 'select $1 , $2');
});
