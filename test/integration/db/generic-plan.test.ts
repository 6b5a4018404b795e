import t, { type Test } from 'tap';
import { createTestDatabase } from '../../helpers/db.js';
import { roundTripCounter } from '../../helpers/round-trips.js';
import { createDb, type Knex } from '../../../src/db/connection.js';
import { prepared, statementName } from '../../../src/db/prepared.js';

/**
 * A statement marked `prepared(query, { plan: 'generic' })` is planned once per connection
 * (src/db/generic-plan.ts), on a real server: PostgreSQL's own counters of the connection's prepared
 * statements tell custom plans from uses of the generic one. The setting that asks for it must not
 * outlive the statement, whether it succeeded or failed, and must not reach into a transaction.
 */
async function oneConnectionDb(t: Test): Promise<{ db: Knex; roundTrips: () => number }> {
  const db = createDb(await createTestDatabase(t), { max: 1 });
  t.teardown(() => db.destroy());
  await db.raw('CREATE TABLE widgets (id integer PRIMARY KEY, kind text NOT NULL, made integer NOT NULL)');
  await db.raw('CREATE INDEX widgets_kind_made ON widgets (kind, made, id)');
  await db.raw(`INSERT INTO widgets SELECT i, CASE WHEN i % 10 = 0 THEN 'rare' ELSE 'common' END, 1000 - i FROM generate_series(1, 500) i`);
  await db.raw('ANALYZE widgets');
  return { db, roundTrips: await roundTripCounter(db) };
}

const page = (db: Knex, kind: string) => db('widgets').where({ kind }).orderBy([{ column: 'made' }, { column: 'id' }]).limit(3, { skipBinding: true }).select('id');
const pageSql = (db: Knex) => page(db, 'x').toSQL().toNative().sql;

async function plans(db: Knex, name: string): Promise<{ generic: number; custom: number }> {
  const row = (await db.raw('SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = ?', [name])).rows[0];
  return row ?? { generic: 0, custom: 0 };
}

const setting = async (db: Knex | Knex.Transaction) => (await db.raw('SHOW plan_cache_mode')).rows[0].plan_cache_mode as string;

t.test('a statement marked for a generic plan is planned once per connection, in one round trip each time', async (t) => {
  const { db, roundTrips } = await oneConnectionDb(t);
  const name = statementName(pageSql(db));
  const expected = (await page(db, 'rare')).map((r) => r.id);
  t.same(expected, [500, 490, 480], 'the unmarked statement answers');

  t.same((await prepared(page(db, 'rare'), { plan: 'generic' })).map((r) => r.id), expected, 'the first execution answers the same');
  t.same(await plans(db, name), { generic: 0, custom: 1 }, 'its first execution, still unparsed, is planned for its values');
  const before = roundTrips();
  t.same((await prepared(page(db, 'common'), { plan: 'generic' })).map((r) => r.id), [499, 498, 497]);
  t.same((await prepared(page(db, 'rare'), { plan: 'generic' })).map((r) => r.id), expected);
  t.equal(roundTrips() - before, 2, 'one round trip per execution, the setting included');
  t.same(await plans(db, name), { generic: 2, custom: 1 }, 'then the generic plan serves every value');
  t.equal(await setting(db), 'auto', 'the setting ended with the statement');

  // An unmarked prepared statement on the same connection is still planned for its values.
  const other = db('widgets').where({ kind: 'rare' }).count({ n: '*' });
  for (let i = 0; i < 3; i++) await prepared(db('widgets').where({ kind: i % 2 ? 'rare' : 'common' }).count({ n: '*' }));
  t.same(await plans(db, statementName(other.toSQL().toNative().sql)), { generic: 0, custom: 3 });
});

t.test('a failing statement leaves no generic-plan setting behind', async (t) => {
  const { db } = await oneConnectionDb(t);
  const failing = () => prepared(db('widgets').where('id', '>', db.raw('1 / ?::int', [0])).limit(1, { skipBinding: true }).select('id'), { plan: 'generic' });
  await failing().catch(() => undefined);
  await t.rejects(failing(), { code: '22012' }, 'the division by zero reaches the caller');
  t.equal(await setting(db), 'auto', 'the setting was rolled back with the failed statement');
  t.same((await page(db, 'rare')).map((r) => r.id), [500, 490, 480], 'the connection goes on');
});

t.test('inside a transaction a marked statement is planned as usual and changes no setting', async (t) => {
  const { db } = await oneConnectionDb(t);
  const name = statementName(pageSql(db));
  await prepared(page(db, 'rare'), { plan: 'generic' });
  await db.transaction(async (trx) => {
    t.same((await prepared(page(trx, 'rare'), { plan: 'generic' })).map((r) => r.id), [500, 490, 480]);
    await prepared(page(trx, 'common'), { plan: 'generic' });
    t.equal(await setting(trx), 'auto', 'the transaction keeps its own setting');
  });
  t.same(await plans(db, name), { generic: 0, custom: 3 }, 'every execution in the transaction was planned for its values');
});
