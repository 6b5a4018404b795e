import pg from 'pg';

/**
 * A statement sent behind preludes: each prelude's Parse (or, for a named statement the connection
 * has parsed, none), Bind and Execute without a Sync, then the statement's own messages and its
 * Sync, corked into one write. PostgreSQL runs them in order in one round trip, and under one Sync,
 * so in one transaction: a prelude's effects that last to the end of the transaction (a BEGIN, a
 * `set_config(…, true)`, a held write) hold for the statement. Each prelude's CommandComplete
 * arrives before the statement's and is passed over. Their ParseCompletes are read as the
 * statement's, so the statement must be unnamed or already parsed on the connection
 * (`isParsedOrUnnamed`). When a prelude fails, PostgreSQL skips the rest up to the Sync and the
 * statement answers with the prelude's error.
 *
 * Used for a transaction's BEGIN (begin-with-first-statement.ts), for a generic plan
 * (generic-plan.ts) and for held writes (write-behind.ts). A prelude must answer no rows.
 */
export interface PgWire {
  parse(query: { text: string; name?: string }): void;
  bind(config: { portal?: string; statement?: string; values: unknown[] }): void;
  execute(config: { portal?: string; rows?: number }): void;
  stream: { cork?: () => void; uncork?: () => void };
  parsedStatements: Record<string, string>;
}

interface PgQueryInternals {
  submit(connection: PgWire): Error | null;
  handleCommandComplete(msg: unknown, connection: PgWire): void;
}

const PgQuery = pg.Query as unknown as new (config: object, values?: unknown, callback?: unknown) => PgQueryInternals;
const prepareValue = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils.prepareValue;

export interface StatementConfig { text: string; values?: unknown[]; name?: string }

/** Whether a statement may follow a prelude: unnamed, or named and already parsed on the connection. */
export function isParsedOrUnnamed(connection: { connection: { parsedStatements: Record<string, string> } }, config: StatementConfig): boolean {
  return !config.name || connection.connection.parsedStatements[config.name] === config.text;
}

export class QueryAfterPrelude extends PgQuery {
  private unanswered: number;
  private readonly preludes: Array<{ text: string; name?: string; values: unknown[] }>;

  /** `preludes`: SQL texts without parameters, or statements (named ones run unnamed unless parsed). */
  constructor(preludes: Array<string | StatementConfig>, config: object, callback: (error: Error | null, response: unknown) => void) {
    super({ ...config, queryMode: 'extended' }, undefined, callback);
    // Values are mapped here, as pg maps a statement's own: a value it cannot send throws to the
    // caller instead of half-way through the write.
    this.preludes = preludes.map((p) => (typeof p === 'string'
      ? { text: p, values: [] }
      : { text: p.text, ...(p.name ? { name: p.name } : {}), values: (p.values ?? []).map(prepareValue) }));
    this.unanswered = this.preludes.length;
  }

  override submit(connection: PgWire): Error | null {
    connection.stream.cork?.();
    try {
      for (const prelude of this.preludes) {
        const parsed = prelude.name !== undefined && connection.parsedStatements[prelude.name] === prelude.text;
        if (!parsed) connection.parse({ text: prelude.text });
        connection.bind({ ...(parsed ? { statement: prelude.name } : {}), values: prelude.values });
        connection.execute({});
      }
      return super.submit(connection);
    } finally {
      connection.stream.uncork?.();
    }
  }

  override handleCommandComplete(msg: unknown, connection: PgWire): void {
    if (this.unanswered > 0) {
      this.unanswered--;
      return;
    }
    super.handleCommandComplete(msg, connection);
  }
}
