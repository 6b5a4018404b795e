/**
 * A constant list of columns as one quoted SQL fragment (`"tickets"."id", "tickets"."subject"`),
 * quoted once per list instead of on every query.
 *
 * knex quotes each name of `select(...columns)` again on every compile: splitting on dots and
 * ` as `, wrapping each part. For the 25 columns a ticket read names, that was about two thirds of
 * the statement's compile time (15 µs of 23, docs/performance.md), paid by every GET and list page.
 *
 * Only plain lower-case identifiers (`column` or `table.column`) are accepted, so the quoting is
 * exactly knex's; anything else is a programming error and throws when the list is first used.
 */
const quoted = new WeakMap<readonly string[], string>();
const IDENTIFIER = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/;

export function columnList(columns: readonly string[]): string {
  let sql = quoted.get(columns);
  if (sql === undefined) {
    sql = columns.map((column) => {
      if (!IDENTIFIER.test(column)) throw new Error(`columnList: "${column}" is not a plain column name`);
      return column.split('.').map(quoteName).join('.');
    }).join(', ');
    quoted.set(columns, sql);
  }
  return sql;
}

/** One plain lower-case name (a table or a column) quoted as knex quotes it; anything else throws. */
export function quoteName(name: string): string {
  if (!NAME.test(name)) throw new Error(`"${name}" is not a plain identifier`);
  return `"${name}"`;
}
const NAME = /^[a-z_][a-z0-9_]*$/;
