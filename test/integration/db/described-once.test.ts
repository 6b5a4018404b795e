import t from 'tap';
import { messageCounter, widgetsDb } from '../../helpers/round-trips.js';
import type { Knex } from '../../../src/db/connection.js';
import { prepared } from '../../../src/db/prepared.js';

/**
 * A named statement's result columns are asked for once per connection (src/db/described-once.ts),
 * on a real server: the server's RowDescription answers are counted on the pool's only connection,
 * and every later execution must read its rows exactly as the first did, with the same parsers.
 */
const WIDGETS = `CREATE TABLE widgets (id integer PRIMARY KEY, name text NOT NULL, made_at timestamptz,
  meta jsonb, tags text[], weight numeric)`;

const byId = (db: Knex, id: number) => prepared(db('widgets').where({ id }).select('*'));

t.test('a named statement is described on its first execution only, and reads the same rows after', async (t) => {
  const { db } = await widgetsDb(t, WIDGETS);
  await db('widgets').insert([
    { id: 1, name: 'one', made_at: new Date('2026-12-03T08:00:00.123Z'), meta: { a: [1, 2] }, tags: ['x', 'y'], weight: '1.50' },
    { id: 2, name: 'two', made_at: null, meta: null, tags: null, weight: null },
  ]);
  const descriptions = await messageCounter(db, 'rowDescription');
  const expected = {
    1: [{ id: 1, name: 'one', made_at: new Date('2026-12-03T08:00:00.123Z'), meta: { a: [1, 2] }, tags: ['x', 'y'], weight: '1.50' }],
    2: [{ id: 2, name: 'two', made_at: null, meta: null, tags: null, weight: null }],
  };
  for (const id of [1, 2, 1, 2, 1]) {
    const rows = await byId(db, id);
    t.same(rows, expected[id as 1 | 2], `widget ${id}: every column parsed as pg parses it`);
    t.ok(rows[0].made_at === null || rows[0].made_at instanceof Date, 'a timestamp is a Date');
  }
  t.equal(descriptions(), 1, 'five executions, one RowDescription');

  await db('widgets').where({ id: 1 }).select('name');
  await db('widgets').where({ id: 1 }).select('name');
  t.equal(descriptions(), 3, 'an unnamed statement is described on every execution');

  t.same((await prepared(db('widgets').where({ id: 1 }).select('name', 'weight')))[0], { name: 'one', weight: '1.50' },
    'another named statement keeps its own columns');
  t.same(await byId(db, 2), expected[2], 'and the first its own');
  t.equal(descriptions(), 4, 'the second named statement described once');
});

t.test('a statement answering no rows, and one with RETURNING, run the same way again', async (t) => {
  const { db } = await widgetsDb(t, WIDGETS);
  for (const id of [1, 2, 3]) {
    t.same(await prepared(db('widgets').insert({ id, name: `w${id}` }).returning(['id', 'name'])), [{ id, name: `w${id}` }], `insert ${id} returns its row`);
    t.same(await prepared(db('widgets').where({ id }).update({ name: `v${id}` })), 1, `update ${id} counts its row`);
  }
  t.same(await db('widgets').orderBy('id').pluck('name'), ['v1', 'v2', 'v3']);
});

t.test('a value pg cannot send fails its query alone; the connection goes on', async (t) => {
  const { db } = await widgetsDb(t, WIDGETS);
  await db('widgets').insert({ id: 1, name: 'one', meta: { ok: true } });
  const withMeta = (meta: unknown) => prepared(db('widgets').where('meta', '=', meta as never).select('id'));
  t.same(await withMeta(JSON.stringify({ ok: true })), [{ id: 1 }], 'described');
  const unsendable = { toPostgres() { throw new Error('this value cannot be sent'); } };
  await t.rejects(withMeta(unsendable), /this value cannot be sent/, 'the value cannot be sent: the query rejects');
  t.same(await withMeta(JSON.stringify({ ok: true })), [{ id: 1 }], 'the same statement runs on the same connection after');
  t.same((await db.raw('SELECT 1 AS n')).rows, [{ n: 1 }], 'and so does any other');
});

t.test('columns changed under a described SELECT *: one failure, then the new columns', async (t) => {
  const { db } = await widgetsDb(t, WIDGETS);
  await db('widgets').insert({ id: 1, name: 'one' });
  t.same(Object.keys((await byId(db, 1))[0]), ['id', 'name', 'made_at', 'meta', 'tags', 'weight']);
  await db.raw('ALTER TABLE widgets ADD COLUMN colour text');
  await t.rejects(byId(db, 1), /cached plan must not change result type/, 'PostgreSQL refuses the old statement');
  t.same(Object.keys((await byId(db, 1))[0]), ['id', 'name', 'made_at', 'meta', 'tags', 'weight', 'colour'],
    'the replaced connection describes it anew');
});
