import t from 'tap';
import { roundTripCounter, widgetsDb } from '../../helpers/round-trips.js';
import { insertStatement } from '../../../src/db/insert-statement.js';
import { prepared } from '../../../src/db/prepared.js';
import { writeBehind } from '../../../src/db/write-behind.js';

/**
 * The hot INSERTs compiled once per shape (src/db/insert-statement.ts): the same text and bindings
 * as knex's own compile of the same insert, on every kind of value, and the rows they write on a
 * real server, as a prepared statement and as a held write.
 */
const TABLES = `CREATE TABLE widgets (id integer PRIMARY KEY, name text NOT NULL, meta jsonb, tags text[], made_at timestamptz, n bigint DEFAULT 7);
  CREATE SEQUENCE widget_numbers;
  CREATE TABLE parts (id integer PRIMARY KEY, widget_id integer NOT NULL REFERENCES widgets DEFERRABLE INITIALLY DEFERRED, label text)`;

const at = new Date('2026-12-04T09:00:00Z');

t.test('the text and bindings are those knex compiles, value kind by value kind', async (t) => {
  const { db } = await widgetsDb(t, TABLES);
  const cases: Array<[string, Array<Record<string, unknown>>]> = [
    ['plain values, an object, an array, a date, null', [{ name: 'one', id: 1, meta: { a: [1, { b: 'x' }] }, tags: ['p', 'q'], made_at: at, n: null }]],
    ['an undefined value is DEFAULT', [{ id: 2, name: 'two', n: undefined }]],
    ['a knex raw is inlined with its bindings', [{ id: 3, name: 'three', n: db.raw('nextval(?::regclass)', ['widget_numbers']) }]],
    ['rows with different columns', [{ id: 4, name: 'four' }, { id: 5, name: 'five', meta: { c: true } }, { n: 9, name: 'six', id: 6 }]],
  ];
  for (const [what, rows] of cases) {
    const ours = insertStatement(db, { table: 'widgets', rows }).toSQL() as unknown as { sql: string; bindings: unknown[] };
    const knex = db('widgets').insert(rows).toSQL();
    t.same({ sql: ours.sql, bindings: ours.bindings }, { sql: knex.sql, bindings: knex.bindings }, what);
  }
  const withs = insertStatement(db, { table: 'widgets', rows: [{ id: 7, name: 'seven' }] },
    [{ name: 'first', table: 'parts', rows: [{ id: 1, widget_id: 7, label: 'a' }, { id: 2, widget_id: 7 }] }, { name: 'empty', table: 'parts', rows: [] }],
    { returning: true }).toSQL() as unknown as { sql: string; bindings: unknown[] };
  const knexWiths = db.queryBuilder().with('first', (qb) => qb.insert([{ id: 1, widget_id: 7, label: 'a' }, { id: 2, widget_id: 7 }]).into('parts'))
    .insert({ id: 7, name: 'seven' }).into('widgets').returning('*').toSQL();
  t.same({ sql: withs.sql, bindings: withs.bindings }, { sql: knexWiths.sql, bindings: knexWiths.bindings }, 'WITH inserts (an empty one left out) and RETURNING *');
});

t.test('one text per shape: the same shape reuses it, another shape gets its own', async (t) => {
  const { db } = await widgetsDb(t, TABLES);
  const text = (row: Record<string, unknown>) => (insertStatement(db, { table: 'widgets', rows: [row] }).toSQL() as unknown as { sql: string }).sql;
  t.equal(text({ id: 1, name: 'a' }), text({ name: 'b', id: 2 }), 'the order of a row\'s keys does not matter');
  t.not(text({ id: 1, name: 'a', n: 3 }), text({ id: 1, name: 'a', n: undefined }), 'an absent value is DEFAULT in the text');
  t.match(text({ id: 1, name: 'a', n: undefined }), /\("id", "n", "name"\) values \(\?, DEFAULT, \?\)$/);
});

t.test('it writes and returns the rows on the server, as a prepared statement and as a held write', async (t) => {
  const { db } = await widgetsDb(t, TABLES);
  const roundTrips = await roundTripCounter(db);
  const { rows } = await prepared(insertStatement(db, { table: 'widgets', rows: [{ id: 1, name: 'one', meta: { k: 'v' }, tags: ['x'], made_at: at, n: db.raw('nextval(?::regclass)', ['widget_numbers']) }] },
    [{ name: 'first', table: 'parts', rows: [{ id: 10, widget_id: 1, label: 'a' }] }], { returning: true })) as unknown as { rows: Array<Record<string, unknown>> };
  t.same(rows, [{ id: 1, name: 'one', meta: { k: 'v' }, tags: ['x'], made_at: at, n: '1' }], 'RETURNING * answers the main table\'s row');
  t.same(await db('parts').select('id', 'widget_id', 'label'), [{ id: 10, widget_id: 1, label: 'a' }], 'the WITH insert wrote its row');

  // A named statement goes out on its own the first time, to be parsed (src/db/write-behind.ts).
  await prepared(insertStatement(db, { table: 'widgets', rows: [{ id: 3, name: 'three' }] }));
  const before = roundTrips();
  await db.transaction(async (trx) => {
    await writeBehind(prepared(insertStatement(trx, { table: 'widgets', rows: [{ id: 2, name: 'two' }] })));
    t.equal(roundTrips() - before, 0, 'held: nothing sent yet');
  });
  t.equal(roundTrips() - before, 1, 'sent with the COMMIT');
  t.same(await db('widgets').where({ id: 2 }).first('name', 'n'), { name: 'two', n: '7' }, 'the absent column took its default');
});

t.test('a failing insert rejects with the server\'s error and writes nothing', async (t) => {
  const { db } = await widgetsDb(t, TABLES);
  await t.rejects(insertStatement(db, { table: 'widgets', rows: [{ id: 1, name: 'one' }] }, [{ name: 'orphan', table: 'parts', rows: [{ id: 1, widget_id: 99 }] }]) as unknown as Promise<unknown>,
    { code: '23503' }, 'the WITH insert\'s foreign key fails the statement');
  t.same(await db('widgets').select('id'), [], 'the main row was not kept either');
});

t.test('names other than plain identifiers and subquery values are refused', async (t) => {
  const { db } = await widgetsDb(t, TABLES);
  t.throws(() => insertStatement(db, { table: 'widgets"; drop table widgets; --', rows: [{ id: 1 }] }), /not a plain identifier/);
  t.throws(() => insertStatement(db, { table: 'widgets', rows: [{ 'Name': 'x' }] }), /not a plain identifier/);
  t.throws(() => insertStatement(db, { table: 'widgets', rows: [{ id: db('parts').max('id') }] }), /subquery/);
  t.throws(() => insertStatement(db, { table: 'widgets', rows: [{}] }), /no columns/);
});
