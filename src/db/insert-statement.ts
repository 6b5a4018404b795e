import type { Knex } from 'knex';
import KnexRaw from 'knex/lib/raw.js';
import { quoteName } from './column-list.js';

/**
 * The INSERTs every create and reply writes (a ticket with its first message, an event with its
 * webhook deliveries, the mail outbox's rows), compiled once per shape instead of on every call.
 *
 * knex compiles an insert anew each time: it sorts and quotes the columns, tests every value for a
 * plain object, builds the `WITH` clauses through a callback and writes the text value by value.
 * For a create's three inserts that was about a twentieth of the daemon's CPU (docs/performance.md).
 * The text depends only on the shape of the rows: the tables, which columns each row has, which
 * values are absent (DEFAULT) and which are SQL of their own (a knex raw such as the ticket number's
 * `nextval`). So the text is built once per shape and kept; each call only lists the values.
 *
 * The statement is the one knex would write: columns in sorted order, a column a row lacks (or
 * leaves undefined) as DEFAULT, a plain object as JSON text, a knex raw inlined with its bindings,
 * anything else (arrays, dates, buffers, null) a binding as it is. Only plain lower-case
 * identifiers are accepted, so quoting them is exactly knex's; anything else is a programming error.
 */
export interface InsertPart {
  table: string;
  rows: ReadonlyArray<Record<string, unknown>>;
}

/** A `WITH <name> AS (INSERT …)` in front of the statement: rows written by the same statement. */
export interface WithInsert extends InsertPart {
  name: string;
}

interface Shape {
  sql: string;
  /** Per part (the `WITH` parts, then the main one), the sorted columns whose values are bound. */
  columns: string[][];
}

const MAX_SHAPES = 500;
const shapes = new Map<string, Shape>();

/**
 * `WITH … INSERT INTO main … [RETURNING *]` as a knex raw of `trx`: awaited, it answers as a raw
 * does (the driver's result, `rows` when returning). It takes `options()` like any knex query, so
 * `prepared()` and `writeBehind()` mark it as they would the query builder's insert.
 */
export function insertStatement(trx: Knex | Knex.Transaction, main: InsertPart, withInserts: readonly WithInsert[] = [], options: { returning?: boolean } = {}): Knex.Raw {
  const parts = [...withInserts.filter((part) => part.rows.length), main];
  const raws = new RawValues();
  const key = shapeKey(parts, options.returning === true, raws);
  let shape = shapes.get(key);
  if (!shape) {
    // The shapes are few (a fixed set of code paths and endpoint counts); the bound only guards a leak.
    if (shapes.size >= MAX_SHAPES) shapes.clear();
    shape = compileShape(parts, options.returning === true, raws);
    shapes.set(key, shape);
  }
  const bindings: unknown[] = [];
  parts.forEach((part, index) => {
    const columns = shape.columns[index]!;
    for (const row of part.rows) {
      for (const column of columns) bindValue(row[column], bindings, raws);
    }
  });
  return new CompiledRaw((trx as unknown as { client: unknown }).client, shape.sql, bindings) as unknown as Knex.Raw;
}

/** The knex raws among one call's values, each compiled once (its text goes in the key, its bindings in the values). */
class RawValues {
  // Made on the first raw: most calls have none.
  private compiled?: Map<Knex.Raw, { sql: string; bindings: readonly unknown[] }>;

  of(raw: Knex.Raw): { sql: string; bindings: readonly unknown[] } {
    this.compiled ??= new Map();
    let known = this.compiled.get(raw);
    if (!known) {
      known = raw.toSQL();
      this.compiled.set(raw, known);
    }
    return known;
  }
}

/** What makes two calls one text: tables, each row's columns, and which values are DEFAULT or SQL. */
function shapeKey(parts: readonly InsertPart[], returning: boolean, raws: RawValues): string {
  let key = returning ? 'R' : '-';
  for (const part of parts) {
    key += `\u0001${(part as Partial<WithInsert>).name ?? ''}\u0001${part.table}`;
    for (const row of part.rows) {
      key += '\u0002';
      for (const column in row) {
        const value = row[column];
        key += `\u0003${column}`;
        if (value === undefined) key += '\u0004';
        else if (isRaw(value)) key += `\u0005${raws.of(value).sql}`;
        else if (typeof value === 'function' || isQueryBuilder(value)) throw new Error(`insertStatement: ${part.table}.${column} is a subquery, which it does not compile`);
      }
    }
  }
  return key;
}

function compileShape(parts: readonly InsertPart[], returning: boolean, raws: RawValues): Shape {
  const columns = parts.map(sortedColumns);
  const inserts = parts.map((part, index) => insertText(part, columns[index]!, raws));
  const withs = parts.slice(0, -1).map((part, index) => `${quoteName((part as WithInsert).name)} as (${inserts[index]})`);
  const sql = `${withs.length ? `with ${withs.join(', ')} ` : ''}${inserts[inserts.length - 1]}${returning ? ' returning *' : ''}`;
  // Only the columns with a value in some row are bound; DEFAULT and inlined SQL are in the text.
  return { sql, columns };
}

/** The union of the rows' columns, sorted as knex sorts them (so the text is knex's own). */
function sortedColumns(part: InsertPart): string[] {
  const all = new Set<string>();
  for (const row of part.rows) for (const column in row) all.add(column);
  if (!all.size) throw new Error(`insertStatement: a row of ${part.table} has no columns`);
  return [...all].sort();
}

function insertText(part: InsertPart, columns: readonly string[], raws: RawValues): string {
  const rows = part.rows.map((row) => columns.map((column) => {
    const value = row[column];
    if (value === undefined) return 'DEFAULT';
    if (isRaw(value)) return raws.of(value).sql;
    return '?';
  }).join(', '));
  return `insert into ${quoteName(part.table)} (${columns.map(quoteName).join(', ')}) values (${rows.join('), (')})`;
}

function bindValue(value: unknown, bindings: unknown[], raws: RawValues): void {
  if (value === undefined) return;
  if (isRaw(value)) {
    bindings.push(...raws.of(value).bindings);
    return;
  }
  // A json column's object goes as its JSON text, as knex sends it.
  bindings.push(isPlainObject(value) ? JSON.stringify(value) : value);
}

function isRaw(value: unknown): value is Knex.Raw {
  return typeof value === 'object' && value !== null && (value as { isRawInstance?: boolean }).isRawInstance === true;
}

function isQueryBuilder(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { toSQL?: unknown }).toSQL === 'function';
}

function isPlainObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/**
 * A knex raw whose text and bindings are already final: its `toSQL()` hands them over without the
 * raw's own pass over the text, which looks at every `?` again. The options (the `prepared()` and
 * `writeBehind()` marks) are merged as a raw's are.
 */
class CompiledRaw extends KnexRaw {
  constructor(client: unknown, sql: string, bindings: unknown[]) {
    super(client);
    this.set(sql, bindings);
  }

  override toSQL(): { method: 'raw'; sql: string; bindings: unknown[]; options: Record<string, unknown> } {
    return { method: 'raw', sql: this.sql, bindings: this.bindings, options: Object.assign({}, ...(this._options ?? [])) as Record<string, unknown> };
  }
}
