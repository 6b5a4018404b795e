import type { Knex } from 'knex';

/**
 * A session advisory lock held while `fn` runs, on a pool connection set aside for it (a session
 * lock belongs to its connection, so it is taken and given back on the same one). `wait` blocks
 * until the lock is free; otherwise a lock held elsewhere answers `{ held: false }` at once and
 * `fn` does not run. The lock is given back before the connection returns to the pool, so a pooled
 * connection never carries it to its next user; if that fails the connection is marked for the pool
 * to close (which frees the lock too) instead of lending it again.
 */
export async function withSessionLock<T>(db: Knex, key: string, wait: boolean, fn: () => Promise<T>): Promise<{ held: false } | { held: true; value: T }> {
  const pool = db.client as KnexPool;
  const connection = await pool.acquireConnection();
  try {
    if (wait) await connection.query('SELECT pg_advisory_lock(hashtext($1))', [key]);
    else {
      const { rows } = await connection.query('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [key]);
      if (!rows[0]?.locked) return { held: false };
    }
    try {
      return { held: true, value: await fn() };
    } finally {
      try {
        await connection.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
      } catch {
        connection.__knex__disposed = `the advisory lock ${key} could not be released`;
      }
    }
  } finally {
    await pool.releaseConnection(connection);
  }
}

interface PooledConnection {
  query(sql: string, params: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  /** knex's pool destroys a connection marked so instead of lending it again. */
  __knex__disposed?: unknown;
}

interface KnexPool {
  acquireConnection(): Promise<PooledConnection>;
  releaseConnection(connection: PooledConnection): Promise<void>;
}
