import pg from 'pg';

/**
 * A statement sent behind a prelude: the prelude's Parse, Bind and Execute without a Sync, then
 * the statement's own messages and its Sync, corked into one write. PostgreSQL runs both in order
 * in one round trip, and under one Sync, so in one transaction: the prelude's effects that last
 * to the end of the transaction (a BEGIN, a `set_config(…, true)`) hold for the statement. The
 * prelude's CommandComplete is the first one to arrive and is not the statement's: it is passed
 * over. Its ParseComplete is read as the statement's, so the statement must be unnamed or already
 * parsed on the connection (`isParsedOrUnnamed`).
 *
 * Used for a transaction's BEGIN (begin-with-first-statement.ts) and for a generic plan
 * (generic-plan.ts). A prelude must answer no rows.
 */
export interface PgWire {
  parse(query: { text: string; name?: string }): void;
  bind(config: { portal?: string; statement?: string; values: unknown[] }): void;
  execute(config: { portal?: string; rows?: number }): void;
  stream: { cork?: () => void; uncork?: () => void };
}

interface PgQueryInternals {
  submit(connection: PgWire): Error | null;
  handleCommandComplete(msg: unknown, connection: PgWire): void;
}

const PgQuery = pg.Query as unknown as new (config: object, values?: unknown, callback?: unknown) => PgQueryInternals;

export interface StatementConfig { text: string; values?: unknown[]; name?: string }

/** Whether a statement may follow a prelude: unnamed, or named and already parsed on the connection. */
export function isParsedOrUnnamed(connection: { connection: { parsedStatements: Record<string, string> } }, config: StatementConfig): boolean {
  return !config.name || connection.connection.parsedStatements[config.name] === config.text;
}

export class QueryAfterPrelude extends PgQuery {
  private preludeAnswered = false;

  constructor(private readonly prelude: string, config: object, callback: (error: Error | null, response: unknown) => void) {
    super({ ...config, queryMode: 'extended' }, undefined, callback);
  }

  override submit(connection: PgWire): Error | null {
    connection.stream.cork?.();
    try {
      connection.parse({ text: this.prelude });
      connection.bind({ values: [] });
      connection.execute({});
      return super.submit(connection);
    } finally {
      connection.stream.uncork?.();
    }
  }

  override handleCommandComplete(msg: unknown, connection: PgWire): void {
    if (!this.preludeAnswered) {
      this.preludeAnswered = true;
      return;
    }
    super.handleCommandComplete(msg, connection);
  }
}
