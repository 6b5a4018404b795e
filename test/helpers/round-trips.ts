import type { Test } from 'tap';
import { createDb, type Knex } from '../../src/db/connection.js';
import { createTestDatabase } from './db.js';

/** Counts the server's `message` answers (pg's event names: `readyForQuery`, `rowDescription`) on a pool of one connection. */
export async function messageCounter(db: Knex, message: string): Promise<() => number> {
  const connection = await db.client.acquireConnection() as { connection: { on(event: string, fn: () => void): void } };
  let count = 0;
  connection.connection.on(message, () => { count++; });
  await db.client.releaseConnection(connection);
  return () => count;
}

/**
 * Counts the round trips of a pool of one connection, as the server's ReadyForQuery answers (one
 * per Sync or simple query): for tests that hold the knex client to how many a statement takes.
 */
export const roundTripCounter = (db: Knex) => messageCounter(db, 'readyForQuery');

/** A fresh database on a pool of one connection, with a `widgets` table (`tableSql`), and its round-trip counter. */
export async function widgetsDb(t: Test, tableSql = 'CREATE TABLE widgets (id integer PRIMARY KEY, name text NOT NULL)'): Promise<{ db: Knex; roundTrips: () => number }> {
  const db = createDb(await createTestDatabase(t), { max: 1 });
  t.teardown(() => db.destroy());
  await db.raw(tableSql);
  return { db, roundTrips: await roundTripCounter(db) };
}

/** Whether the connection is outside any transaction (its transaction started with this statement). */
export async function outsideTransaction(db: Knex): Promise<boolean> {
  const row = (await db.raw('SELECT xact_start = query_start AS autocommit FROM pg_stat_activity WHERE pid = pg_backend_pid()')).rows[0];
  return row.autocommit === true;
}
