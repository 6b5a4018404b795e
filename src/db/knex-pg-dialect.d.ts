/** knex's PostgreSQL client class (CommonJS `module.exports`), extended by src/db/pg-client.ts. */
declare module 'knex/lib/dialects/postgres/index.js' {
  export default class KnexPgClient {
    constructor(config: unknown);
    _query(connection: unknown, obj: unknown): Promise<unknown>;
    releaseConnection(connection: unknown): Promise<void>;
    positionBindings(sql: string): string;
  }
}
