// knex exports no dialect classes; its PostgreSQL client is extended here (src/db/knex-pg-dialect.d.ts).
import KnexPgClient from 'knex/lib/dialects/postgres/index.js';
import { GENERIC_PLAN_MARK, PREPARED_MARK, statementName } from './prepared.js';
import { canCarryBegin, holdBegin, isTransactionEnd, notSent, takeHeldBegin, type HeldBeginConnection } from './begin-with-first-statement.js';
import { FORCE_GENERIC_PLAN, canPlanGeneric, type GenericPlanConnection } from './generic-plan.js';
import { QueryAfterPrelude, type StatementConfig } from './query-after-prelude.js';

interface QueryObject { sql: string; bindings?: unknown[]; options?: Record<string, unknown>; response?: unknown }
type Connection = HeldBeginConnection & GenericPlanConnection & {
  __knex__disposed?: unknown;
  query(config: object, callback?: (error: Error | null, response: unknown) => void): unknown;
};

const RESULT_TYPE_CHANGED = 'cached plan must not change result type';

/**
 * knex's PostgreSQL client with three changes to how statements reach the server: the statements
 * marked with prepared() run as named prepared statements (src/db/prepared.ts), those marked for a
 * generic plan are planned once per connection (src/db/generic-plan.ts), and a transaction's BEGIN
 * is sent with its first statement (src/db/begin-with-first-statement.ts).
 */
export class HelpdeskPgClient extends KnexPgClient {
  override _query(connection: Connection, obj: QueryObject): Promise<unknown> {
    if (holdBegin(connection, obj.sql)) return Promise.resolve({ ...obj, response: notSent('BEGIN') });
    let generic = false;
    if (obj.options?.[PREPARED_MARK]) {
      const { [PREPARED_MARK]: _marked, [GENERIC_PLAN_MARK]: genericMark, ...options } = obj.options;
      obj.options = { ...options, name: statementName(obj.sql) };
      generic = genericMark === true;
    }
    const begin = takeHeldBegin(connection);
    const config = statementConfig(obj);
    let sent: Promise<unknown>;
    if (begin !== undefined) sent = this.afterBegin(connection, obj, config, begin);
    else if (generic && canPlanGeneric(connection, config)) sent = this.afterPrelude(connection, obj, config, FORCE_GENERIC_PLAN);
    else sent = super._query(connection, obj);
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
  private async afterBegin(connection: Connection, obj: QueryObject, config: StatementConfig, begin: string): Promise<unknown> {
    // Nothing was sent, so nothing needs ending.
    if (isTransactionEnd(obj.sql)) return { ...obj, response: notSent(obj.sql.replace(/;$/, '')) };
    if (!canCarryBegin(connection, config)) {
      await super._query(connection, { sql: begin });
      return super._query(connection, obj);
    }
    return this.afterPrelude(connection, obj, config, begin);
  }

  /** The statement behind `prelude`, in one round trip (src/db/query-after-prelude.ts). */
  private afterPrelude(connection: Connection, obj: QueryObject, config: StatementConfig, prelude: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      connection.query(new QueryAfterPrelude(prelude, config, (error, response) => {
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
