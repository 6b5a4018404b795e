import type { QueryBuilderType } from 'objection';
import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { isUuid } from '../core/ids.js';
import type { CursorMeta, Page } from '../core/pagination.js';
import { DEFAULT_PAGE_SIZE } from '../core/pagination.js';
import { prepared } from '../db/prepared.js';
import { Ticket } from './models.js';
import { applyConditions, compileConditions, parseConditionsParam } from './conditions.js';
import { isStaffActor, ticketVisibility } from './visibility.js';
import { TICKET_OUT_COLUMNS, ticketOut } from './output.js';
import { columnList } from '../db/column-list.js';
import type { TicketListQuery, TicketOut, TicketSort } from './schemas.js';

/**
 * GET /tickets: filters, the conditions language, four sorts, and both pagination forms of
 * CONTRACT §1. Each sort key is paired with `id` as the tie-breaker and walks an index
 * `(tenant_id, key, id)` (migrations/…_desk.ts). A cursor names the sort it was made for and the
 * last row's key; the next page is the rows after that key by a row-value comparison: no OFFSET,
 * no count(*). Tickets without an SLA deadline sort as if due at infinity (after all dated ones
 * ascending, before them descending).
 */
const KEY_SQL: Record<TicketSort, string> = {
  created_at: 'tickets.created_at',
  updated_at: 'tickets.updated_at',
  sla_due_at: "coalesce(tickets.sla_due_at, 'infinity'::timestamptz)",
  ticket_number: 'tickets.ticket_number',
};
const KEY_COLUMN = 'cursor_key';

const FILTER_COLUMNS = ['status_id', 'priority_id', 'type_id', 'assigned_agent_id', 'team_id', 'requester_id', 'organization_id', 'channel'] as const;

/**
 * The equality filters (sorted, joined by `+`) that one index serves exactly for each sort: the
 * index leads with `tenant_id` and those columns, then the sort key and `id` (migrations/…_desk.ts,
 * …_ticket_inbox_indexes.ts). A page of such a list is the same walk of that index whatever the
 * values, so its statement is planned once per connection (src/db/generic-plan.ts); any other
 * list is planned for its own values, since skewed filters may want different plans.
 */
const EXACT_INDEX_FILTERS: Record<TicketSort, ReadonlySet<string>> = {
  created_at: new Set(['', 'status_id', 'priority_id', 'type_id', 'assigned_agent_id', 'team_id', 'requester_id', 'channel']),
  updated_at: new Set(['', 'status_id', 'priority_id+status_id']),
  sla_due_at: new Set(['']),
  ticket_number: new Set(['']),
};

/** Whether a staff list with these equality filters and nothing else walks one index exactly. */
export function walksOneIndex(sort: TicketSort, filters: readonly string[]): boolean {
  return EXACT_INDEX_FILTERS[sort].has([...filters].sort().join('+'));
}

interface CursorKey { s: TicketSort; d: 'asc' | 'desc'; k: string; i: string }

/** The sort key as exact text: microseconds for timestamps ('inf' for none), the number itself. */
function keyText(sort: TicketSort): string {
  if (sort === 'ticket_number') return `${KEY_SQL[sort]}::text`;
  return `(case when ${KEY_SQL[sort]} = 'infinity' then 'inf' else (extract(epoch from ${KEY_SQL[sort]}) * 1000000)::bigint::text end)`;
}

function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string, sort: TicketSort, dir: 'asc' | 'desc'): CursorKey {
  const invalid = (message = 'is invalid') => errors.validation([{ field: 'cursor', message }]);
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw invalid();
  let key: Partial<CursorKey> | null;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!key || typeof key.k !== 'string' || !(key.k === 'inf' || /^-?\d{1,18}$/.test(key.k)) || !isUuid(key.i)) throw invalid();
  if (key.s !== sort || key.d !== dir) throw invalid('was made for another sort_by or sort_dir');
  return key as CursorKey;
}

/** `(key, id) > / < (cursor key, cursor id)` in the key's own type. */
function afterCursor(qb: QueryBuilderType<Ticket>, sort: TicketSort, dir: 'asc' | 'desc', key: CursorKey): void {
  const cmp = dir === 'asc' ? '>' : '<';
  if (sort === 'ticket_number') {
    qb.whereRaw(`(${KEY_SQL[sort]}, tickets.id) ${cmp} (?::integer, ?::uuid)`, [key.k, key.i]);
    return;
  }
  const infinite = key.k === 'inf';
  qb.whereRaw(
    `(${KEY_SQL[sort]}, tickets.id) ${cmp} ((case when ? then 'infinity'::timestamptz else timestamptz 'epoch' + ?::bigint * interval '1 microsecond' end), ?::uuid)`,
    [infinite, infinite ? '0' : key.k, key.i],
  );
}

function cursorOf(row: Record<string, unknown>, sort: TicketSort, dir: 'asc' | 'desc'): string {
  return encodeCursor({ s: sort, d: dir, k: String(row[KEY_COLUMN]), i: String(row.id) });
}

export async function listTickets(ctx: Ctx, query: TicketListQuery): Promise<Page<TicketOut, CursorMeta>> {
  if (query.cursor !== undefined && query.page !== undefined) throw errors.validation([{ field: 'cursor', message: 'cannot be combined with page' }]);
  const sort = query.sort_by ?? 'created_at';
  const dir = query.sort_dir ?? 'desc';
  const pageSize = query.page_size ?? DEFAULT_PAGE_SIZE;
  const conditions = query.conditions !== undefined ? await compileConditions(ctx, parseConditionsParam(query.conditions)) : [];
  const visible = await ticketVisibility(ctx);
  const filters = FILTER_COLUMNS.filter((column) => query[column] !== undefined);

  const filtered = () => {
    const qb = Ticket.scoped(ctx);
    visible(qb);
    for (const column of filters) qb.where(`tickets.${column}`, query[column]!);
    if (query.tag !== undefined) qb.whereRaw('tickets.tags @> ?::text[]', [[query.tag.trim().toLowerCase()]]);
    applyConditions(qb, conditions);
    return qb;
  };
  const ordered = filtered()
    .select(Ticket.raw(`${columnList(TICKET_OUT_COLUMNS)}, ${keyText(sort)} as ${KEY_COLUMN}`))
    .orderByRaw(`${KEY_SQL[sort]} ${dir}, tickets.id ${dir}`);

  if (query.cursor !== undefined) {
    if (query.cursor) afterCursor(ordered, sort, dir, decodeCursor(query.cursor, sort, dir));
    // One row more than asked tells whether another page follows, without counting.
    // Plain rows (the knex query objection built): a page needs no model instances.
    // The knex client plans it generically only outside a transaction (src/db/generic-plan.ts).
    const exact = isStaffActor(ctx) && conditions.length === 0 && query.tag === undefined && walksOneIndex(sort, filters);
    // A generic plan needs the limit in the text: a parameter would be planned as a tenth of the rows.
    const statement = ordered.toKnexQuery().limit(pageSize + 1, { skipBinding: exact });
    const rows = (await (exact ? prepared(statement, { plan: 'generic' }) : statement)) as unknown as Array<Ticket & Record<string, unknown>>;
    const shown = rows.slice(0, pageSize);
    return {
      data: shown.map(ticketOut),
      meta: { page_size: pageSize, next_cursor: rows.length > pageSize ? cursorOf(shown[shown.length - 1]!, sort, dir) : null },
    };
  }

  // The page form: bounded depth (MAX_PAGE), with a total, and a cursor to continue from.
  const page = query.page ?? 1;
  const [rows, counted] = await Promise.all([
    ordered.limit(pageSize).offset((page - 1) * pageSize).toKnexQuery() as unknown as Promise<Array<Ticket & Record<string, unknown>>>,
    filtered().clearSelect().count({ total: '*' }).first() as unknown as Promise<{ total: string } | undefined>,
  ]);
  const total = Number(counted?.total ?? 0);
  const more = (page - 1) * pageSize + rows.length < total;
  return {
    data: rows.map(ticketOut),
    meta: { page, page_size: pageSize, total, next_cursor: more && rows.length ? cursorOf(rows[rows.length - 1]!, sort, dir) : null },
  };
}
