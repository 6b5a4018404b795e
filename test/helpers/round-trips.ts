import type { Knex } from '../../src/db/connection.js';

/**
 * Counts the round trips of a pool of one connection, as the server's ReadyForQuery answers (one
 * per Sync or simple query): for tests that hold the knex client to how many a statement takes.
 */
export async function roundTripCounter(db: Knex): Promise<() => number> {
  const connection = await db.client.acquireConnection() as { connection: { on(event: string, fn: () => void): void } };
  let count = 0;
  connection.connection.on('readyForQuery', () => { count++; });
  await db.client.releaseConnection(connection);
  return () => count;
}
