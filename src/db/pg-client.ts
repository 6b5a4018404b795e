// knex exports no dialect classes; its PostgreSQL client is extended here (src/db/knex-pg-dialect.d.ts).
import KnexPgClient from 'knex/lib/dialects/postgres/index.js';
import { GENERIC_PLAN_MARK, PREPARED_MARK, statementName } from './prepared.js';
import { holdBegin, isRollback, isTransactionEnd, notSent, takeHeldBegin, type HeldBeginConnection } from './begin-with-first-statement.js';
import { FORCE_GENERIC_PLAN, canPlanGeneric, type GenericPlanConnection } from './generic-plan.js';
import { QueryAfterPrelude, canShareRoundTrip, type StatementConfig } from './query-after-prelude.js';
import { DescribedOnceQuery } from './described-once.js';
import { WRITE_BEHIND_MARK, heldCommand, holdWrite, takeHeldWrites, type HeldWritesConnection } from './write-behind.js';

interface QueryObject { sql: string; bindings?: unknown[]; options?: Record<string, unknown>; response?: unknown; returning?: unknown }
type Connection = HeldBeginConnection & GenericPlanConnection & HeldWritesConnection & {
  __knex__disposed?: unknown;
  query(config: object, callback?: (error: Error | null, response: unknown) => void): unknown;
};

const RESULT_TYPE_CHANGED = 'cached plan must not change result type';
const positionedTexts = new Map<string, string>();
const MAX_POSITIONED_TEXTS = 2000;

/**
 * knex's PostgreSQL client with four changes to how statements reach the server: the statements
 * marked with prepared() run as named prepared statements (src/db/prepared.ts), described once per
 * connection (src/db/described-once.ts), those marked for a
 * generic plan are planned once per connection (src/db/generic-plan.ts), a transaction's BEGIN
 * is sent with its first statement (src/db/begin-with-first-statement.ts), and the writes marked
 * with writeBehind() are sent with the transaction's next statement (src/db/write-behind.ts).
 * It also positions a text's placeholders once per text (positionBindings below).
 */
export class HelpdeskPgClient extends KnexPgClient {
  override _query(connection: Connection, obj: QueryObject): Promise<unknown> {
    if (holdBegin(connection, obj.sql)) return Promise.resolve({ ...obj, response: notSent('BEGIN') });
    let generic = false;
    let behind = false;
    if (obj.options?.[PREPARED_MARK] || obj.options?.[WRITE_BEHIND_MARK]) {
      const { [PREPARED_MARK]: named, [GENERIC_PLAN_MARK]: genericMark, [WRITE_BEHIND_MARK]: behindMark, ...options } = obj.options;
      obj.options = named ? { ...options, name: statementName(obj.sql) } : options;
      generic = named === true && genericMark === true;
      behind = behindMark === true;
    }
    const config = statementConfig(obj);
    if (behind) {
      if (obj.returning) return Promise.reject(new Error('A write held for the next statement returns no rows; drop its returning()'));
      if (holdWrite(connection, config)) return Promise.resolve({ ...obj, response: notSent(heldCommand(obj.sql)) });
    }
    const begin = takeHeldBegin(connection);
    const writes = takeHeldWrites(connection);
    let sent: Promise<unknown>;
    if (begin !== undefined || writes.length) sent = this.afterHeld(connection, obj, config, begin, writes);
    else if (generic && canPlanGeneric(connection, config)) sent = this.afterPrelude(connection, obj, config, [{ text: FORCE_GENERIC_PLAN }]);
    else if (config.name !== undefined) sent = this.send(connection, obj, (done) => new DescribedOnceQuery(config, done));
    else sent = super._query(connection, obj);
    return sent.catch((error: unknown) => {
      if ((error as { code?: string }).code === '0A000' && String((error as Error).message).includes(RESULT_TYPE_CHANGED)) {
        // Its prepared statements describe the old columns: the pool replaces the connection.
        connection.__knex__disposed = error;
      }
      throw error;
    });
  }

  /**
   * knex turns a statement's `?` into `$1…$n` on every execution, with a regular expression and a
   * callback per placeholder. The result depends on the text alone, and the texts a daemon runs
   * are few, so each is converted once (a create's statements hold about a hundred placeholders).
   */
  override positionBindings(sql: string): string {
    let positioned = positionedTexts.get(sql);
    if (positioned === undefined) {
      // The bound only guards against a leak: texts whose values are inlined would each be new.
      if (positionedTexts.size >= MAX_POSITIONED_TEXTS) positionedTexts.clear();
      positioned = super.positionBindings(sql);
      positionedTexts.set(sql, positioned);
    }
    return positioned;
  }

  /** A connection goes back to the pool without a BEGIN or writes held, whatever happened on it. */
  override releaseConnection(connection: Connection): Promise<void> {
    takeHeldBegin(connection);
    takeHeldWrites(connection);
    return super.releaseConnection(connection);
  }

  /**
   * The statement after what its transaction holds for it: the BEGIN (not sent yet), held writes,
   * or both. They go in front of it in one round trip when it can share one; a COMMIT or ROLLBACK
   * with nothing of the transaction sent yet sends nothing, and a ROLLBACK drops held writes.
   */
  private async afterHeld(connection: Connection, obj: QueryObject, config: StatementConfig, begin: string | undefined, writes: readonly StatementConfig[]): Promise<unknown> {
    if (isTransactionEnd(obj.sql) && (isRollback(obj.sql) || !writes.length)) {
      return begin === undefined ? super._query(connection, obj) : { ...obj, response: notSent(obj.sql.replace(/;$/, '')) };
    }
    const preludes = begin === undefined ? writes : [{ text: begin }, ...writes];
    if (isTransactionEnd(obj.sql)) {
      try {
        return await this.afterPrelude(connection, obj, config, preludes);
      } catch (error) {
        // A held write failed and the COMMIT did not run: the transaction is still open, aborted.
        await super._query(connection, { sql: 'ROLLBACK' }).catch((rollbackError: unknown) => { connection.__knex__disposed = rollbackError; });
        throw error;
      }
    }
    if (canShareRoundTrip(connection, config)) return this.afterPrelude(connection, obj, config, preludes);
    // A statement that cannot share a round trip: what is held goes first, the last carrying the rest.
    const last = preludes[preludes.length - 1]!;
    await this.afterPrelude(connection, { sql: last.text }, last, preludes.slice(0, -1));
    return super._query(connection, obj);
  }

  /** The statement behind `preludes`, in one round trip (src/db/query-after-prelude.ts). */
  private afterPrelude(connection: Connection, obj: QueryObject, config: StatementConfig, preludes: readonly StatementConfig[]): Promise<unknown> {
    return this.send(connection, obj, (done) => new QueryAfterPrelude(preludes, config, done));
  }

  /** Runs a query object of ours on the connection, answering as knex's own `_query` does. */
  private send(connection: Connection, obj: QueryObject, query: (done: (error: Error | null, response: unknown) => void) => object): Promise<unknown> {
    return new Promise((resolve, reject) => {
      connection.query(query((error, response) => {
        if (error) return reject(error);
        obj.response = response;
        resolve(obj);
      }));
    });
  }
}

function statementConfig(obj: QueryObject): StatementConfig {
  return { text: obj.sql, values: obj.bindings ?? [], ...obj.options } as StatementConfig;
}
