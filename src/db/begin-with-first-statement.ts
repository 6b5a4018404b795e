
/**
 * A transaction's BEGIN travels with its first statement.
 *
 * knex sends BEGIN as a round trip of its own, and waits for it before the transaction's first
 * statement. Each round trip costs the daemon a socket write and the database a wake-up of its
 * backend, on a loaded 2-core machine about as much as a small statement's own work
 * (docs/performance.md). So the knex client (src/db/pg-client.ts) holds BEGIN on its connection
 * and sends it in front of the first statement, in one write and under one Sync
 * (query-after-prelude.ts): PostgreSQL runs BEGIN, then the statement, and answers both at once.
 * What the transaction sees does not change: its snapshot is taken by its first statement either
 * way, and that statement fails or succeeds inside the transaction just as before (knex then rolls
 * back or goes on).
 *
 * - A transaction that ends before any statement (COMMIT or ROLLBACK with BEGIN still held) sends
 *   nothing at all.
 * - A first statement without parameters goes out after a BEGIN of its own, as before: it may hold
 *   several commands (a migration's raw SQL), which the extended protocol cannot carry.
 * - So does a named statement its connection has not parsed yet: the client records a statement
 *   as parsed on the first ParseComplete it reads, which would be BEGIN's.
 */

type Response = { command: string; rows: unknown[]; rowCount: number | null; fields: unknown[] };

/** The texts knex begins a transaction with (`BEGIN;`, or with an isolation level or READ ONLY). */
const BEGIN = /^BEGIN( TRANSACTION [A-Za-z ]+)?;$/;
const END = /^(COMMIT|ROLLBACK);?$/;

/** A pg connection as the knex client sees it. */
export interface HeldBeginConnection {
  __heldBegin?: string;
}

/** The answer knex reads for a statement that was not sent. */
export function notSent(command: string): Response {
  return { command, rows: [], rowCount: null, fields: [] };
}

/** Holds the BEGIN `sql` on `connection` when it is one; answers whether it did. */
export function holdBegin(connection: HeldBeginConnection, sql: string): boolean {
  if (!BEGIN.test(sql)) return false;
  connection.__heldBegin = sql;
  return true;
}

/** The BEGIN held on `connection`, taken off it (undefined when none is). */
export function takeHeldBegin(connection: HeldBeginConnection): string | undefined {
  const held = connection.__heldBegin;
  if (held !== undefined) connection.__heldBegin = undefined;
  return held;
}

/** `COMMIT` or `ROLLBACK`: after a held BEGIN, nothing needs sending. */
export function isTransactionEnd(sql: string): boolean {
  return END.test(sql);
}

/** `ROLLBACK` (of the whole transaction, not to a savepoint). */
export function isRollback(sql: string): boolean {
  return END.exec(sql)?.[1] === 'ROLLBACK';
}

/** Whether the transaction's BEGIN is held on `connection`, not yet sent. */
export function isBeginHeld(connection: HeldBeginConnection): boolean {
  return connection.__heldBegin !== undefined;
}

