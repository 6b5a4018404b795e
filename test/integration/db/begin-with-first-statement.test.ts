import t from 'tap';
import { outsideTransaction, widgetsDb } from '../../helpers/round-trips.js';
import type { Knex } from '../../../src/db/connection.js';
import { prepared } from '../../../src/db/prepared.js';

/**
 * A transaction's BEGIN is sent with its first statement (src/db/begin-with-first-statement.ts),
 * on a real server. Round trips are counted as the server's ReadyForQuery answers (one per Sync or
 * simple query) on the pool's only connection; the transactions must behave exactly as before.
 */
t.test('BEGIN and the first statement take one round trip; the transaction commits as before', async (t) => {
  const { db, roundTrips } = await widgetsDb(t);
  const before = roundTrips();
  await db.transaction(async (trx) => {
    await trx('widgets').insert({ id: 1, name: 'one' });
    await trx('widgets').insert({ id: 2, name: 'two' });
  });
  t.equal(roundTrips() - before, 3, 'BEGIN with the first insert, the second insert, COMMIT');
  t.same((await db('widgets').orderBy('id').select('id')).map((r) => r.id), [1, 2], 'both rows committed');
  t.ok(await outsideTransaction(db), 'the connection went back to the pool outside a transaction');
});

t.test('the statements of one transaction see one transaction', async (t) => {
  const { db } = await widgetsDb(t);
  const [first, second] = await db.transaction(async (trx) => {
    const a = (await trx.raw('SELECT txid_current() AS x WHERE 1 = ?', [1])).rows[0].x;
    const b = (await trx.raw('SELECT txid_current() AS x')).rows[0].x;
    return [a, b];
  });
  t.equal(first, second, 'the first statement ran inside the transaction the second one saw');
});

t.test('a failing first statement rolls the transaction back and leaves the connection clean', async (t) => {
  const { db } = await widgetsDb(t);
  await db('widgets').insert({ id: 1, name: 'one' });
  await t.rejects(db.transaction(async (trx) => {
    await trx('widgets').insert({ id: 1, name: 'again' });
  }), { code: '23505' }, 'the duplicate key reaches the caller');
  await t.rejects(db.transaction(async (trx) => {
    await trx('widgets').insert({ id: 2, name: 'two' });
    throw new Error('changed my mind');
  }), /changed my mind/);
  t.same((await db('widgets').select('id', 'name')), [{ id: 1, name: 'one' }], 'nothing of either transaction stayed');
  t.ok(await outsideTransaction(db), 'no transaction left open on the connection');
});

t.test('a transaction without statements sends nothing', async (t) => {
  const { db, roundTrips } = await widgetsDb(t);
  const before = roundTrips();
  t.equal(await db.transaction(async () => 'nothing'), 'nothing');
  await t.rejects(db.transaction(async () => { throw new Error('before any statement'); }), /before any statement/);
  t.equal(roundTrips() - before, 0, 'no BEGIN, COMMIT or ROLLBACK went out');
  t.ok(await outsideTransaction(db), 'the next statement runs on its own');
});

t.test('isolation levels, multi-command SQL and unparsed named statements keep a BEGIN of their own', async (t) => {
  const { db, roundTrips } = await widgetsDb(t);
  const level = await db.transaction(async (trx) => (await trx.raw('SELECT current_setting(?) AS level', ['transaction_isolation'])).rows[0].level,
    { isolationLevel: 'repeatable read', readOnly: true });
  t.equal(level, 'repeatable read', 'the carried BEGIN set the isolation level');

  let before = roundTrips();
  await db.transaction(async (trx) => {
    await trx.raw(`INSERT INTO widgets VALUES (1, 'one'); INSERT INTO widgets VALUES (2, 'two')`);
  });
  t.equal(roundTrips() - before, 3, 'BEGIN, the two commands as one simple query, COMMIT');
  t.equal((await db('widgets').count('* as n'))[0]!.n, '2');

  const read = (trx: Knex.Transaction) => prepared(trx('widgets').where({ id: 1 }).first('name'));
  before = roundTrips();
  t.same(await db.transaction(read), { name: 'one' });
  t.equal(roundTrips() - before, 3, 'first use of a named statement: BEGIN alone, the statement, COMMIT');
  before = roundTrips();
  t.same(await db.transaction(read), { name: 'one' });
  t.equal(roundTrips() - before, 2, 'once parsed, it carries the BEGIN');
});

t.test('savepoints inside a carried transaction roll back on their own', async (t) => {
  const { db } = await widgetsDb(t);
  await db.transaction(async (trx) => {
    await trx('widgets').insert({ id: 1, name: 'kept' });
    await t.rejects(trx.transaction(async (inner) => {
      await inner('widgets').insert({ id: 2, name: 'dropped' });
      throw new Error('inner');
    }), /inner/);
  });
  t.same(await db('widgets').select('id'), [{ id: 1 }], 'the savepoint rolled back only its own insert');
});
