import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { useFastTimestampParser } from './timestamp-parser.js';
import { HelpdeskPgClient } from './pg-client.js';

export type { Knex };

// bigint (count(*), sums) stays a string on purpose: convert deliberately where it is read.
// timestamptz arrives as a Date (parsed by hand, see timestamp-parser.ts); numeric stays a string.
useFastTimestampParser();

/**
 * A knex instance on PostgreSQL. `max` is the pool size (a job worker needs few connections).
 */
export function createDb(connectionString: string, options: { max?: number } = {}): Knex {
  return knexFactory({
    // knex's own PostgreSQL client, with named statements and BEGIN sent with the first statement.
    client: HelpdeskPgClient as unknown as typeof knexFactory.Client,
    connection: { connectionString, application_name: 'helpdesk' },
    pool: { min: 0, max: options.max ?? 10 },
    acquireConnectionTimeout: 10_000,
  });
}

/** Points a connection string at another database on the same server. */
export function withDatabase(connectionString: string, database: string): string {
  const url = new URL(connectionString);
  url.pathname = '/' + encodeURIComponent(database);
  return url.toString();
}

/** Answers whether a server accepts connections, within `timeoutMs`. */
export async function canConnect(connectionString: string, timeoutMs = 2000): Promise<boolean> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: timeoutMs });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
