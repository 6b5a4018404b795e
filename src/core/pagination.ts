import { Type, type TSchema } from '@sinclair/typebox';
import type { Knex } from 'knex';
import { errors } from './errors.js';
import { isUuid } from './ids.js';
import { Nullable } from './schema-types.js';

/**
 * List pagination (CONTRACT §1), in two forms:
 * - page form for bounded lists: `page` + `page_size`, answering `meta: {page, page_size, total}`;
 * - cursor form for lists that grow without bound: an opaque `cursor` instead of `page`, answering
 *   `meta: {page_size, next_cursor}` (null at the end) and no total. It is keyset-based on
 *   (created_at desc, id desc) with a row-value comparison, never OFFSET, so deep pages stay cheap
 *   and rows inserted meanwhile neither repeat nor vanish.
 * Unbounded lists accept both forms; their page form also carries `next_cursor`, so a client can
 * start with `?page_size=n` and continue by cursor.
 */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
/**
 * The deepest page of the page form. OFFSET pagination gets slower with depth, and a page number
 * past 2^53 is no longer an exact number (`page=1e20` would answer some other page under its
 * label); deeper lists continue by cursor.
 */
export const MAX_PAGE = 10_000;

/** Query parameters of the page form; spread into a route's querystring schema next to its filters. */
export const pageParams = {
  // No schema default for `page`: the cursor form must tell "page sent" from "page omitted".
  page: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: MAX_PAGE,
    description: `Page number, default 1, at most ${MAX_PAGE}; lists that take a cursor continue by cursor beyond`,
  })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })),
};

/** Query parameters of lists that accept both forms. */
export const cursorParams = {
  ...pageParams,
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'Opaque cursor from meta.next_cursor; replaces page' })),
};

export const PageQuery = Type.Object(pageParams);
export const CursorQuery = Type.Object(cursorParams);

export interface PageInput {
  page?: number;
  page_size?: number;
}

export interface CursorInput extends PageInput {
  cursor?: string;
}

export interface PageMeta {
  page: number;
  page_size: number;
  total: number;
}

export interface CursorMeta {
  page_size: number;
  next_cursor: string | null;
  page?: number;
  total?: number;
}

export interface Page<T, M = PageMeta> {
  data: T[];
  meta: M;
}

/**
 * Response schema of a list: `{data: [item], meta}`. With `{cursor: true}` the meta fits both forms
 * (page and total only in the page form, next_cursor always).
 */
export function ListOf<T extends TSchema>(item: T, options: { cursor?: boolean } = {}) {
  const meta = options.cursor ? CursorMetaSchema : PageMetaSchema;
  // A named item names its list (`User` → `UserList`): a named type in generated clients.
  return Type.Object({ data: Type.Array(item), meta }, item.$id ? { $id: `${item.$id}List` } : {});
}

const PageMetaSchema = Type.Object({ page: Type.Integer(), page_size: Type.Integer(), total: Type.Integer() }, { $id: 'PageMeta' });

const CursorMetaSchema = Type.Object({
  page: Type.Optional(Type.Integer()),
  page_size: Type.Integer(),
  total: Type.Optional(Type.Integer()),
  next_cursor: Nullable(Type.String()),
}, { $id: 'CursorMeta', description: 'Meta of a list that also pages by cursor: page and total only in the page form' });

/**
 * A list's query: a knex builder, or an Objection one (`Model.scoped(ctx)…`), which paginates as
 * the knex query it builds; rows then come back plain, and the list's mapper shapes them.
 */
export type ListQuery = Knex.QueryBuilder | { toKnexQuery(): Knex.QueryBuilder };

function asKnex(qb: ListQuery): Knex.QueryBuilder {
  return 'toKnexQuery' in qb ? qb.toKnexQuery() : qb;
}

function pageSizeOf(query: PageInput): number {
  return query.page_size ?? DEFAULT_PAGE_SIZE;
}

/**
 * The page form over a knex query that already carries its filters and order (add a unique
 * tie-breaker such as `id` to the order, or rows can swap between pages). The total counts the
 * same query without order or columns, so the query must not group.
 */
export async function paginatePage<Row, T = Row>(query: PageInput, list: ListQuery, map?: (row: Row) => T): Promise<Page<T>> {
  const qb = asKnex(list);
  const page = query.page ?? 1;
  const pageSize = pageSizeOf(query);
  const { rows, total } = await pageWithTotal(qb.clone(), qb, page, pageSize);
  return { data: shaped<Row, T>(rows, map), meta: { page, page_size: pageSize, total } };
}

/** One page of `rowsQuery` and the total count of `base` (its filters, without order or columns). */
async function pageWithTotal(rowsQuery: Knex.QueryBuilder, base: Knex.QueryBuilder, page: number, pageSize: number) {
  const [rows, counted] = await Promise.all([
    rowsQuery.limit(pageSize).offset((page - 1) * pageSize) as Promise<Record<string, unknown>[]>,
    base.clone().clearSelect().clearOrder().count({ total: '*' }).first(),
  ]);
  // pg returns count(*) (a bigint) as a string.
  return { rows, total: Number((counted as { total: string | number } | undefined)?.total ?? 0) };
}

/** The keyset of an unbounded list: a table whose rows are ordered by (created_at desc, id desc). */
export interface Keyset {
  /** Table name or alias used in the query; its `created_at` and `id` columns form the key. */
  table: string;
  /** Newest first (default), or oldest first for chronological lists (a conversation, a timeline). */
  direction?: 'desc' | 'asc';
}

interface CursorKey {
  /** created_at in microseconds since the epoch: exact, where a JS Date would drop the µs. */
  t: string;
  i: string;
}

const CURSOR_COLUMN = 'cursor_created_us';

function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): CursorKey {
  const invalid = () => errors.validation([{ field: 'cursor', message: 'is invalid' }]);
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const candidate = key as Partial<CursorKey> | null;
  if (!candidate || typeof candidate.t !== 'string' || !/^-?\d{1,18}$/.test(candidate.t) || !isUuid(candidate.i)) throw invalid();
  return { t: candidate.t, i: candidate.i };
}

/** Selects the table's rows plus the exact cursor key, in keyset order. */
function keysetOrdered(qb: Knex.QueryBuilder, keyset: Keyset): Knex.QueryBuilder {
  const { table } = keyset;
  const direction = keyset.direction ?? 'desc';
  return qb
    .clone()
    .select(`${table}.*`)
    .select(qb.client.raw(`(extract(epoch from ??) * 1000000)::bigint::text as ${CURSOR_COLUMN}`, [`${table}.created_at`]))
    .orderBy(`${table}.created_at`, direction)
    .orderBy(`${table}.id`, direction);
}

function cursorOf(row: Record<string, unknown>): string {
  return encodeCursor({ t: String(row[CURSOR_COLUMN]), i: String(row.id) });
}

/** Rows as the caller's items: without the cursor column, through `map` when given. */
function shaped<Row, T>(rows: Record<string, unknown>[], map?: (row: Row) => T): T[] {
  const plain = rows.map((row) => {
    const { [CURSOR_COLUMN]: _key, ...rest } = row;
    return rest as Row;
  });
  return map ? plain.map(map) : (plain as unknown as T[]);
}

/**
 * The cursor form: `query.cursor` (absent or empty = from the start) continues after the row it
 * names; `page` with it is 422. The query carries filters only; this adds the columns
 * (`<table>.*`; select joined columns before calling) and the order.
 */
export async function paginateCursor<Row, T = Row>(
  query: CursorInput,
  list: ListQuery,
  keyset: Keyset,
  map?: (row: Row) => T,
): Promise<Page<T, CursorMeta>> {
  const qb = asKnex(list);
  if (query.cursor !== undefined && query.page !== undefined) {
    throw errors.validation([{ field: 'cursor', message: 'cannot be combined with page' }]);
  }
  const pageSize = pageSizeOf(query);
  const ordered = keysetOrdered(qb, keyset);
  if (query.cursor) {
    const key = decodeCursor(query.cursor);
    ordered.whereRaw(`(??, ??) ${keyset.direction === 'asc' ? '>' : '<'} (timestamptz 'epoch' + ?::bigint * interval '1 microsecond', ?::uuid)`, [
      `${keyset.table}.created_at`, `${keyset.table}.id`, key.t, key.i,
    ]);
  }
  // One row more than asked tells whether another page follows, without counting.
  const rows = (await ordered.limit(pageSize + 1)) as Record<string, unknown>[];
  const more = rows.length > pageSize;
  const pageRows = rows.slice(0, pageSize);
  return {
    data: shaped<Row, T>(pageRows, map),
    meta: { page_size: pageSize, next_cursor: more ? cursorOf(pageRows[pageRows.length - 1]!) : null },
  };
}

/**
 * Both forms for an unbounded list: the cursor form when `cursor` is sent, else the page form in
 * keyset order, whose meta adds `next_cursor` to continue by cursor.
 */
export async function paginateUnbounded<Row, T = Row>(
  query: CursorInput,
  list: ListQuery,
  keyset: Keyset,
  map?: (row: Row) => T,
  /** The list's total when the caller already knows it (a summary it computes anyway): no count query. */
  knownTotal?: number,
): Promise<Page<T, CursorMeta>> {
  const qb = asKnex(list);
  if (query.cursor !== undefined) return paginateCursor(query, qb, keyset, map);
  const page = query.page ?? 1;
  const pageSize = pageSizeOf(query);
  const { rows, total } = knownTotal === undefined
    ? await pageWithTotal(keysetOrdered(qb, keyset), qb, page, pageSize)
    : { rows: await (keysetOrdered(qb, keyset).limit(pageSize).offset((page - 1) * pageSize) as Promise<Record<string, unknown>[]>), total: knownTotal };
  const more = (page - 1) * pageSize + rows.length < total;
  return {
    data: shaped<Row, T>(rows, map),
    meta: { page, page_size: pageSize, total, next_cursor: more && rows.length ? cursorOf(rows[rows.length - 1]!) : null },
  };
}
