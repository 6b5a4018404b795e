// knex exports no dialect classes; its PostgreSQL client is extended here (src/db/knex-pg-dialect.d.ts).
import KnexPgClient from 'knex/lib/dialects/postgres/index.js';
import { PREPARED_MARK, statementName } from './prepared.js';
import {
  QueryAfterBegin, canCarryBegin, holdBegin, isTransactionEnd, notSent, takeHeldBegin, type HeldBeginConnection,
} from './begin-with-first-statement.js';

interface QueryObject { sql: string; bindings?: unknown[]; options?: Record<string, unknown>; response?: unknown }
type Connection = HeldBeginConnection & {
  __knex__disposed?: unknown;
  query(config: object, callback?: (error: Error | null, response: unknown) => void): unknown;
};

const RESULT_TYPE_CHANGED = 'cached plan must not change result type';

/**
 * knex's PostgreSQL client with two changes to how statements reach the server: the statements
 * marked with prepared() run as named prepared statements (src/db/prepared.ts), and a
 * transaction's BEGIN is sent with its first statement (src/db/begin-with-first-statement.ts).
 */
export class HelpdeskPgClient extends KnexPgClient {
  override _query(connection: Connection, obj: QueryObject): Promise<unknown> {
    if (holdBegin(connection, obj.sql)) return Promise.resolve({ ...obj, response: notSent('BEGIN') });
    if (obj.options?.[PREPARED_MARK]) {
      const { [PREPARED_MARK]: _marked, ...options } = obj.options;
      obj.options = { ...options, name: statementName(obj.sql) };
    }
    const begin = takeHeldBegin(connection);
    const sent = begin === undefined ? super._query(connection, obj) : this.afterBegin(connection, obj, begin);
    return sent.catch((error: unknown) => {
      if ((error as { code?: string }).code === '0A000' && String((error as Error).message).includes(RESULT_TYPE_CHANGED)) {
        // Its prepared statements describe the old columns: the pool replaces the connection.
        connection.__knex__disposed = error;
      }
      throw error;
    });
  }

  /** A connection goes back to the pool without a BEGIN held, whatever happened on it. */
  override releaseConnection(connection: Connection): Promise<void> {
    takeHeldBegin(connection);
    return super.releaseConnection(connection);
  }

  /** The transaction's first statement, with the BEGIN held for it. */
  private async afterBegin(connection: Connection, obj: QueryObject, begin: string): Promise<unknown> {
    // Nothing was sent, so nothing needs ending.
    if (isTransactionEnd(obj.sql)) return { ...obj, response: notSent(obj.sql.replace(/;$/, '')) };
    const config = { text: obj.sql, values: obj.bindings ?? [], ...obj.options } as { text: string; values: unknown[]; name?: string };
    if (!canCarryBegin(connection, config)) {
      await super._query(connection, { sql: begin });
      return super._query(connection, obj);
    }
    return new Promise((resolve, reject) => {
      connection.query(new QueryAfterBegin(begin, config, (error, response) => {
        if (error) return reject(error);
        obj.response = response;
        resolve(obj);
      }));
    });
  }
}
