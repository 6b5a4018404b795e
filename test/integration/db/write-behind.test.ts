import t from 'tap';
import { outsideTransaction, widgetsDb } from '../../helpers/round-trips.js';
import type { Knex } from '../../../src/db/connection.js';
import { prepared } from '../../../src/db/prepared.js';
import { writeBehind } from '../../../src/db/write-behind.js';

/**
 * Writes marked with writeBehind() are held and sent with their transaction's next statement
 * (src/db/write-behind.ts), on a real server. Round trips are counted as the server's
 * ReadyForQuery answers on the pool's only connection; what the transactions write and see must
 * be exactly what they wrote and saw when every statement went out on its own.
 */
const WIDGETS = 'CREATE TABLE widgets (id integer PRIMARY KEY, name text NOT NULL, meta jsonb)';

const ids = async (db: Knex) => (await db('widgets').orderBy('id').select('id')).map((r) => r.id as number);

t.test('held writes go out with the COMMIT: one round trip for the writes and the end', async (t) => {
  const { db, roundTrips } = await widgetsDb(t, WIDGETS);
  const before = roundTrips();
  await db.transaction(async (trx) => {
    t.same(await trx('widgets').where('id', '>', 0).select('id'), [], 'BEGIN with a first read');
    t.equal(await writeBehind(trx('widgets').insert({ id: 1, name: 'one', meta: { at: new Date('2026-12-02T10:00:00Z'), tags: ['a'] } })).then(() => roundTrips() - before), 1, 'the insert did not go out on its own');
    await writeBehind(trx('widgets').where({ id: 1 }).update({ name: 'uno' }));
    await writeBehind(trx('widgets').insert({ id: 2, name: 'two' }));
  });
  t.equal(roundTrips() - before, 2, 'BEGIN and the read, then the three writes with the COMMIT');
  t.same(await db('widgets').orderBy('id').select('id', 'name', 'meta'), [
    { id: 1, name: 'uno', meta: { at: '2026-12-02T10:00:00.000Z', tags: ['a'] } },
    { id: 2, name: 'two', meta: null },
  ], 'written in order, values mapped as pg maps them');
  t.ok(await outsideTransaction(db), 'the connection went back outside a transaction');
});

t.test('a later statement of the transaction sees the held writes, and carries them', async (t) => {
  const { db, roundTrips } = await widgetsDb(t, WIDGETS);
  const before = roundTrips();
  const seen = await db.transaction(async (trx) => {
    await writeBehind(trx('widgets').insert({ id: 1, name: 'one' }));
    await writeBehind(trx('widgets').insert({ id: 2, name: 'two' }));
    return (await trx('widgets').where('id', '>', 0).orderBy('id').select('id')).map((r) => r.id);
  });
  t.same(seen, [1, 2], 'the read ran after both writes, in their transaction');
  t.equal(roundTrips() - before, 2, 'BEGIN, both writes and the read in one round trip, then COMMIT');
  t.same(await ids(db), [1, 2]);
});

t.test('a transaction with only held writes takes one round trip', async (t) => {
  const { db, roundTrips } = await widgetsDb(t, WIDGETS);
  const before = roundTrips();
  await db.transaction(async (trx) => {
    await writeBehind(trx('widgets').insert({ id: 1, name: 'one' }));
  });
  t.equal(roundTrips() - before, 1, 'BEGIN, the write and COMMIT together');
  t.same(await ids(db), [1]);
});

t.test('a held write that fails fails the COMMIT it went with; nothing stays and the connection is clean', async (t) => {
  const { db } = await widgetsDb(t, WIDGETS);
  await db('widgets').insert({ id: 1, name: 'one' });
  await t.rejects(db.transaction(async (trx) => {
    await trx('widgets').insert({ id: 2, name: 'two' });
    await writeBehind(trx('widgets').insert({ id: 1, name: 'again' }));
    await writeBehind(trx('widgets').insert({ id: 3, name: 'three' }));
  }), { code: '23505' }, 'the duplicate key reaches the caller of the transaction');
  t.same(await ids(db), [1], 'neither the statement before it nor the write after it stayed');
  t.ok(await outsideTransaction(db), 'the transaction was rolled back before the connection went back');
  await db.transaction(async (trx) => { await writeBehind(trx('widgets').insert({ id: 4, name: 'four' })); });
  t.same(await ids(db), [1, 4], 'the connection serves the next transaction');
});

t.test('a held write that fails fails the next statement, and the transaction rolls back', async (t) => {
  const { db } = await widgetsDb(t, WIDGETS);
  await db('widgets').insert({ id: 1, name: 'one' });
  let readAnswered = false;
  await t.rejects(db.transaction(async (trx) => {
    await writeBehind(trx('widgets').insert({ id: 1, name: 'again' }));
    await trx('widgets').where('id', '>', 0).select('id');
    readAnswered = true;
  }), { code: '23505' });
  t.notOk(readAnswered, 'the read after it answered with its error');
  t.same(await ids(db), [1]);
  t.ok(await outsideTransaction(db));
});

t.test('a ROLLBACK drops the held writes without sending them', async (t) => {
  const { db, roundTrips } = await widgetsDb(t, WIDGETS);
  let before = roundTrips();
  await t.rejects(db.transaction(async (trx) => {
    await writeBehind(trx('widgets').insert({ id: 1, name: 'one' }));
    throw new Error('changed my mind');
  }), /changed my mind/);
  t.equal(roundTrips() - before, 0, 'nothing went out: not the BEGIN, not the write');
  before = roundTrips();
  await t.rejects(db.transaction(async (trx) => {
    await trx('widgets').insert({ id: 2, name: 'two' });
    await writeBehind(trx('widgets').insert({ id: 3, name: 'three' }));
    throw new Error('changed my mind');
  }), /changed my mind/);
  t.equal(roundTrips() - before, 2, 'the first insert with its BEGIN, then the ROLLBACK alone');
  t.same(await ids(db), [], 'nothing written');
  t.ok(await outsideTransaction(db));
});

t.test('savepoints: held writes go out before the savepoint, and one rolled back undoes its own', async (t) => {
  const { db } = await widgetsDb(t, WIDGETS);
  await db.transaction(async (trx) => {
    await writeBehind(trx('widgets').insert({ id: 1, name: 'kept' }));
    await t.rejects(trx.transaction(async (inner) => {
      await writeBehind(inner('widgets').insert({ id: 2, name: 'dropped' }));
      throw new Error('inner');
    }), /inner/);
    await writeBehind(trx('widgets').insert({ id: 3, name: 'after' }));
  });
  t.same(await ids(db), [1, 3], 'the savepoint rolled back only the write made inside it');
});

t.test('outside a transaction a marked write runs at once', async (t) => {
  const { db, roundTrips } = await widgetsDb(t, WIDGETS);
  const before = roundTrips();
  await writeBehind(db('widgets').insert({ id: 1, name: 'one' }));
  t.equal(roundTrips() - before, 1, 'it went out on its own');
  t.same(await ids(db), [1], 'and was committed');
});

t.test('a named statement is held once its connection has parsed it; without parameters it is never held', async (t) => {
  const { db, roundTrips } = await widgetsDb(t, WIDGETS);
  const write = (trx: Knex.Transaction, id: number) => writeBehind(prepared(trx('widgets').insert({ id, name: 'w' })));
  let before = roundTrips();
  await db.transaction(async (trx) => {
    await trx('widgets').where('id', '>', 0).select('id');
    await write(trx, 1);
  });
  t.equal(roundTrips() - before, 3, 'first use: the statement went out at once, to be parsed');
  before = roundTrips();
  await db.transaction(async (trx) => {
    await trx('widgets').where('id', '>', 0).select('id');
    await write(trx, 2);
  });
  t.equal(roundTrips() - before, 2, 'parsed: held, and sent with the COMMIT by its name');
  before = roundTrips();
  await db.transaction(async (trx) => {
    await trx('widgets').where('id', '>', 0).select('id');
    await writeBehind(trx.raw(`INSERT INTO widgets VALUES (3, 'raw'); INSERT INTO widgets VALUES (4, 'raw')`) as never);
  });
  t.equal(roundTrips() - before, 3, 'multi-command SQL without parameters went out at once');
  t.same(await ids(db), [1, 2, 3, 4]);
});

t.test('held writes before a statement that cannot carry them go out first', async (t) => {
  const { db } = await widgetsDb(t, WIDGETS);
  await db.transaction(async (trx) => {
    await writeBehind(trx('widgets').insert({ id: 1, name: 'one' }));
    await writeBehind(trx('widgets').insert({ id: 2, name: 'two' }));
    await trx.raw(`UPDATE widgets SET name = 'changed' WHERE id = 1; UPDATE widgets SET name = 'changed' WHERE id = 2`);
  });
  t.same(await db('widgets').orderBy('id').select('name'), [{ name: 'changed' }, { name: 'changed' }], 'the multi-command update saw both writes');
});

t.test('a held write cannot ask for rows back', async (t) => {
  const { db } = await widgetsDb(t, WIDGETS);
  await t.rejects(db.transaction(async (trx) => {
    await writeBehind(trx('widgets').insert({ id: 1, name: 'one' }).returning('*'));
  }), /returns no rows/);
  t.same(await ids(db), [], 'the transaction rolled back');
});
