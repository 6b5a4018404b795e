import pg from 'pg';

/**
 * A named statement whose result columns are asked for once per connection.
 *
 * pg sends a Describe with every execution of a prepared statement: the server answers each one
 * with the statement's RowDescription, and pg parses it and looks up a parser for every column
 * again. For the GET of one ticket (25 columns) that was about 4 % of the daemon's CPU
 * (docs/performance.md). A named statement's result columns cannot change while it exists on its
 * connection (PostgreSQL refuses to run it instead, "cached plan must not change result type",
 * and the pool discards that connection: src/db/pg-client.ts), so the description and the parsers
 * built from it are kept with the connection, by statement name, and a later execution sends
 * Bind and Execute only.
 *
 * Only for the plain case: a statement the connection has parsed (pg records it on the server's
 * ParseComplete), without per-query type parsers, binary results or a row limit per fetch.
 */
interface ResultInternals {
  fields: unknown[];
  _parsers: unknown[] | undefined;
  _prebuiltEmptyResultObject: object | null;
}

interface Described { fields: unknown[]; parsers: unknown[] | undefined; empty: object | null }

/** pg's connection, as this module uses it (the map is ours, kept on the connection it describes). */
interface DescribingConnection {
  parsedStatements: Record<string, string>;
  describedStatements?: Map<string, Described>;
  bind(config: { portal?: string; statement?: string; values: unknown[]; binary?: boolean; valueMapper?: unknown }): void;
  sync(): void;
}

interface PgQueryInternals {
  name?: string;
  text: string;
  values: unknown[];
  types?: unknown;
  binary?: boolean;
  rows?: number;
  portal: string;
  callback?: unknown;
  _result: ResultInternals;
  _accumulateRows: boolean;
  listeners(event: string): unknown[];
  prepare(connection: DescribingConnection): void;
  handleRowDescription(msg: { fields: unknown[] }): void;
  handleError(error: unknown, connection: DescribingConnection): void;
  _getRows(connection: DescribingConnection, rows: number | undefined): void;
}

const PgQuery = pg.Query as unknown as new (config: object, values?: unknown, callback?: unknown) => PgQueryInternals;
/** pg's mapping of a JavaScript value to what it sends. */
export const prepareValue = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils.prepareValue;

export class DescribedOnceQuery extends PgQuery {
  /** The connection whose description of this statement the next RowDescription is. */
  private describing: DescribingConnection | undefined;

  constructor(config: { text: string; values?: unknown[]; name?: string; queryMode?: string }, callback: (error: Error | null, response: unknown) => void) {
    super(config, undefined, callback);
  }

  override prepare(connection: DescribingConnection): void {
    const cacheable = !!this.name && this.types === undefined && !this.binary && !this.rows;
    const known = cacheable && connection.parsedStatements[this.name!] === this.text
      ? connection.describedStatements?.get(this.name!)
      : undefined;
    if (!known) {
      this.describing = cacheable ? connection : undefined;
      super.prepare(connection);
      return;
    }
    // What handleRowDescription would have set from the server's answer.
    this._result.fields = known.fields;
    this._result._parsers = known.parsers;
    this._result._prebuiltEmptyResultObject = known.empty;
    this._accumulateRows = !!this.callback || !this.listeners('row').length;
    try {
      connection.bind({ portal: this.portal, statement: this.name!, values: this.values, binary: this.binary, valueMapper: prepareValue });
    } catch (error) {
      // A value pg cannot send: nothing of this statement went out; the Sync brings the server's
      // ReadyForQuery, which ends the query on pg's side.
      connection.sync();
      this.handleError(error, connection);
      return;
    }
    this._getRows(connection, undefined);
  }

  override handleRowDescription(msg: { fields: unknown[] }): void {
    super.handleRowDescription(msg);
    const connection = this.describing;
    if (connection === undefined) return;
    this.describing = undefined;
    connection.describedStatements ??= new Map();
    connection.describedStatements.set(this.name!, {
      fields: this._result.fields,
      parsers: this._result._parsers,
      empty: this._result._prebuiltEmptyResultObject,
    });
  }
}
