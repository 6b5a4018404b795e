import { isBeginHeld, type HeldBeginConnection } from './begin-with-first-statement.js';
import { canShareRoundTrip, type StatementConfig } from './query-after-prelude.js';

/**
 * Writes held back and sent with the transaction's next statement.
 *
 * A write whose answer nobody reads (an event row, the notification outbox's rows, a reply's
 * UPDATE of its ticket) still cost a round trip of its own: the daemon writes to the socket and
 * waits, the database's backend wakes up, runs it and answers. On a loaded 2-core machine that
 * costs about as much as a small statement's own work (docs/performance.md). A statement marked
 * with `writeBehind()` inside a transaction is therefore not sent at once: the knex client
 * (src/db/pg-client.ts) holds it on the transaction's connection and sends it in front of the next
 * statement of that transaction, the COMMIT at the latest, in one write and under one Sync
 * (query-after-prelude.ts). PostgreSQL runs the held writes first, in order, so every later
 * statement sees them exactly as if they had been sent one by one.
 *
 * What changes is only when a held write's failure is seen: with the statement it went out with,
 * not with its own `await`. So only writes whose failure can only be a defect are marked (a
 * constraint the code already guarantees), never one whose error a caller maps to an answer (a
 * unique key read as 409). A COMMIT that fails this way rolls the transaction back before it
 * answers, so the connection goes back to the pool clean.
 *
 * - Outside a transaction a marked statement runs at once: there is no later statement to carry it.
 * - A marked statement cannot return rows (`returning`): its answer is never read.
 * - A named statement the connection has not parsed yet runs at once, so that it is parsed from
 *   then on; so does an unnamed one without parameters (it may hold several commands, which the
 *   extended protocol cannot carry): `canShareRoundTrip`.
 * - A ROLLBACK drops the held writes; a savepoint's statements carry them like any other, so a
 *   ROLLBACK TO SAVEPOINT undoes those written after the savepoint, as it would have.
 */

/** The query option that marks a statement (read by the knex client, src/db/pg-client.ts). */
export const WRITE_BEHIND_MARK = 'helpdeskWriteBehind';

interface WithOptions<Q> { options(options: Readonly<Record<string, unknown>>): Q }

/** Marks a knex query to be held and sent with its transaction's next statement (see above). */
export function writeBehind<Q>(query: Q & WithOptions<Q>): Q {
  return query.options({ [WRITE_BEHIND_MARK]: true });
}

/** A pg connection as the knex client sees it. */
export interface HeldWritesConnection extends HeldBeginConnection {
  __heldWrites?: StatementConfig[];
  getTransactionStatus(): string | null;
  connection: { parsedStatements: Record<string, string> };
}

const NONE: readonly StatementConfig[] = [];

/** Holds a marked statement on `connection` when it can be held (see above); answers whether it was. */
export function holdWrite(connection: HeldWritesConnection, config: StatementConfig): boolean {
  const inTransaction = isBeginHeld(connection) || connection.getTransactionStatus() !== 'I';
  if (!inTransaction || !canShareRoundTrip(connection, config)) return false;
  (connection.__heldWrites ??= []).push({ text: config.text, values: config.values, ...(config.name ? { name: config.name } : {}) });
  return true;
}

/** The writes held on `connection`, taken off it (empty when none are). */
export function takeHeldWrites(connection: HeldWritesConnection): readonly StatementConfig[] {
  const held = connection.__heldWrites;
  if (!held) return NONE;
  connection.__heldWrites = undefined;
  return held;
}

/** The command a held write answers with (knex reads an UPDATE's or DELETE's row count from it). */
export function heldCommand(sql: string): string {
  return /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'INSERT';
}
