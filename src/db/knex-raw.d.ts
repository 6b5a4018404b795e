/** knex's raw query class (CommonJS `module.exports`), extended by src/db/insert-statement.ts. */
declare module 'knex/lib/raw.js' {
  export default class KnexRaw {
    constructor(client: unknown);
    sql: string;
    bindings: unknown[];
    protected _options?: Array<Record<string, unknown>>;
    set(sql: string, bindings: unknown): this;
    toSQL(): unknown;
  }
}
