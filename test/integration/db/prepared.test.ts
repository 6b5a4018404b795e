import t from 'tap';
import { randomUUID } from 'node:crypto';
import { createTestDatabase } from '../../helpers/db.js';
import { createDb } from '../../../src/db/connection.js';
import { prepared, statementName } from '../../../src/db/prepared.js';

/**
 * Statements marked with prepared() run as named prepared statements on a real server: one per SQL
 * text and connection, planned generically once PostgreSQL has seen that it may; unmarked ones stay
 * unnamed. A column added under a running pool fails one prepared `SELECT *` and its connection is
 * replaced, so the next request prepares the statement anew.
 */
t.test('marked statements are prepared once per connection and planned generically', async (t) => {
  const url = await createTestDatabase(t);
  // One connection, so every statement below runs on the session whose catalogue is read.
  const db = createDb(url, { max: 1 });
  t.teardown(() => db.destroy());
  await db.raw('CREATE TABLE widgets (id uuid PRIMARY KEY, name text NOT NULL)');
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  await db('widgets').insert(ids.map((id, i) => ({ id, name: `w${i}` })));
  const statements = async () => (await db.raw(`SELECT name, statement, generic_plans::int AS generic, custom_plans::int AS custom
    FROM pg_prepared_statements ORDER BY name`)).rows as Array<{ name: string; statement: string; generic: number; custom: number }>;

  t.same(await statements(), [], 'nothing is prepared before a marked statement runs');
  for (let i = 0; i < 9; i++) {
    const row = await prepared(db('widgets').where({ id: ids[i % 3] }).first('name'));
    t.equal(row.name, `w${i % 3}`, `execution ${i + 1} answers its own id`);
  }
  await db('widgets').where({ id: ids[0] }).first('name');
  await prepared(db.raw('SELECT count(*)::int AS n FROM widgets WHERE name <> ?', ['w0']));
  const all = await statements();
  const lookup = all.find((s) => s.statement.includes('"widgets"'));
  const raw = all.find((s) => s.statement.includes('count(*)'));
  t.equal(all.length, 2, 'two texts marked, two statements; the unmarked read prepared none');
  t.match(lookup, { statement: /select "name" from "widgets" where "id" = \$1 limit \$2/ });
  t.equal(lookup!.name, statementName(lookup!.statement), 'named by the digest of its text');
  t.equal(lookup!.generic + lookup!.custom, 9, 'one statement served all nine executions');
  t.ok(lookup!.generic >= 3, `after five custom plans the server kept the generic one (${lookup!.generic} generic)`);
  t.match(raw, { statement: /SELECT count\(\*\)::int AS n FROM widgets/ });
});

t.test('a column added under a running pool costs one request, then the statement is prepared anew', async (t) => {
  const url = await createTestDatabase(t);
  const db = createDb(url, { max: 1 });
  const admin = createDb(url, { max: 1 });
  t.teardown(async () => { await db.destroy(); await admin.destroy(); });
  await admin.raw('CREATE TABLE widgets (id uuid PRIMARY KEY, name text NOT NULL)');
  const id = randomUUID();
  await admin('widgets').insert({ id, name: 'w' });
  const read = () => prepared(db('widgets').where({ id }).first());
  t.same(await read(), { id, name: 'w' });
  const pid = (await db.raw('SELECT pg_backend_pid() AS pid')).rows[0].pid;

  await admin.raw(`ALTER TABLE widgets ADD COLUMN colour text NOT NULL DEFAULT 'blue'`);
  await t.rejects(read(), { code: '0A000', message: /cached plan must not change result type/ }, 'the prepared SELECT * refuses the new columns');
  t.same(await read(), { id, name: 'w', colour: 'blue' }, 'the next request reads the new columns');
  const now = (await db.raw('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  t.not(now, pid, 'on a new connection: the pool discarded the one holding the old statement');
});
