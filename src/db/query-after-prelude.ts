import { DescribedOnceQuery, prepareValue } from './described-once.js';

/**
 * A statement sent behind preludes: each prelude's Parse (none for a named one, which the
 * connection has parsed: `canShareRoundTrip`), Bind and Execute without a Sync, then the
 * statement's own messages and its Sync, corked into one write. PostgreSQL runs them in order in one round trip, and under one Sync,
 * so in one transaction: a prelude's effects that last to the end of the transaction (a BEGIN, a
 * `set_config(…, true)`, a held write) hold for the statement. Each prelude's CommandComplete
 * arrives before the statement's and is passed over. Their ParseCompletes are read as the
 * statement's, so the statement too must pass `canShareRoundTrip`. When a prelude fails, PostgreSQL skips the rest up to the Sync and the
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
}

/** pg's Query methods this class overrides. */
interface PgQueryInternals {
  submit(connection: PgWire): Error | null;
  handleCommandComplete(msg: unknown, connection: PgWire): void;
}

// Its statement, when named, is described once per connection (src/db/described-once.ts).
const PgQuery = DescribedOnceQuery as unknown as new (config: object, callback: unknown) => PgQueryInternals;

export interface StatementConfig { text: string; values?: unknown[]; name?: string }

/** Whether a named statement is parsed on the connection (an unnamed one never is). */
export function isParsed(connection: { connection: { parsedStatements: Record<string, string> } }, config: StatementConfig): boolean {
  return !!config.name && connection.connection.parsedStatements[config.name] === config.text;
}

/**
 * Whether a statement can share a round trip with others, as a prelude or behind them: a named
 * one once its connection has parsed it (pg records a statement as parsed on the first
 * ParseComplete it reads, which would be another's), an unnamed one when it has parameters (one
 * without may hold several commands, which the extended protocol cannot carry).
 */
export function canShareRoundTrip(connection: { connection: { parsedStatements: Record<string, string> } }, config: StatementConfig): boolean {
  return config.name ? isParsed(connection, config) : (config.values?.length ?? 0) > 0;
}

export class QueryAfterPrelude extends PgQuery {
  private unanswered: number;
  private readonly preludes: Array<{ text: string; name?: string; values: unknown[] }>;

  constructor(preludes: readonly StatementConfig[], config: object, callback: (error: Error | null, response: unknown) => void) {
    super({ ...config, queryMode: 'extended' }, callback);
    // Values are mapped here, as pg maps a statement's own: a value it cannot send throws to the
    // caller instead of half-way through the write.
    this.preludes = preludes.map((p) => ({ text: p.text, ...(p.name ? { name: p.name } : {}), values: (p.values ?? []).map(prepareValue) }));
    this.unanswered = this.preludes.length;
  }

  override submit(connection: PgWire): Error | null {
    connection.stream.cork?.();
    try {
      for (const prelude of this.preludes) {
        if (prelude.name === undefined) connection.parse({ text: prelude.text });
        connection.bind({ ...(prelude.name === undefined ? {} : { statement: prelude.name }), values: prelude.values });
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
