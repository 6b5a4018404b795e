import type { QueryBuilderType } from 'objection';
import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { isUuid } from '../core/ids.js';
import { Priority, Status, TicketType } from '../vocab/models.js';
import { customFieldsByKey, type FieldDefinition } from '../vocab/custom-field-values.js';
import { CHANNELS, type Ticket } from './models.js';

/**
 * The conditions language of CONTRACT §4: `[{field, operator, value}]`, all of which must hold.
 * Used by `GET /tickets?conditions=…`, saved filters and routing rules (`compileConditions`
 * validates and resolves once; `applyConditions` filters a query, `matchesConditions` tests one
 * ticket in memory, both from the one definition below).
 *
 * | field | operators | value |
 * |---|---|---|
 * | `status`, `priority` | eq, neq, in | key (`open`) or id; `in` takes a list |
 * | `type` | eq, neq, in | name or id, or null (no type) |
 * | `channel` | eq, neq, in | a channel value |
 * | `tag` | eq (has), neq (has not), in (has any) | tag name(s) |
 * | `team_id`, `assigned_agent_id` | eq, neq, in | uuid, or null (none) |
 * | `subject` | eq, neq, contains | text (contains: case-insensitive substring) |
 * | `custom_fields.<key>` | text: eq, neq, contains; select: eq, neq, in; bool: eq, neq; date: eq, neq, gt, lt | per kind |
 *
 * Every problem is named `conditions.<i>.<field|operator|value>` (422).
 */
export const MAX_CONDITIONS = 20;
const MAX_IN = 100;
const OPERATORS = ['eq', 'neq', 'contains', 'in', 'gt', 'lt'] as const;
type Operator = (typeof OPERATORS)[number];

export interface Condition { field: string; operator: string; value: unknown }

/** A validated condition: a column or expression, an operator and resolved value(s). */
export type Compiled =
  | { kind: 'column'; column: string; operator: 'eq' | 'neq' | 'in'; values: Array<string | null> }
  | { kind: 'tag'; operator: 'eq' | 'neq' | 'in'; values: string[] }
  | { kind: 'subject'; operator: 'eq' | 'neq' | 'contains'; value: string }
  | { kind: 'custom'; key: string; field: FieldDefinition; operator: Operator; values: Array<string | boolean> };

const FIELD_OPERATORS: Record<string, readonly Operator[]> = {
  status: ['eq', 'neq', 'in'], priority: ['eq', 'neq', 'in'], type: ['eq', 'neq', 'in'], channel: ['eq', 'neq', 'in'],
  tag: ['eq', 'neq', 'in'], team_id: ['eq', 'neq', 'in'], assigned_agent_id: ['eq', 'neq', 'in'], subject: ['eq', 'neq', 'contains'],
};
const CUSTOM_OPERATORS: Record<FieldDefinition['kind'], readonly Operator[]> = {
  text: ['eq', 'neq', 'contains'], select: ['eq', 'neq', 'in'], bool: ['eq', 'neq'], date: ['eq', 'neq', 'gt', 'lt'],
};

/** Parses the query parameter (JSON text); a malformed one is one problem named `conditions`. */
export function parseConditionsParam(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw errors.validation([{ field: 'conditions', message: 'must be a URL-encoded JSON array of {field, operator, value}' }]);
  }
}

const isText = (v: unknown): v is string => typeof v === 'string' && v.length <= 1000;

export async function compileConditions(ctx: Ctx, input: unknown, name = 'conditions'): Promise<Compiled[]> {
  if (!Array.isArray(input)) throw errors.validation([{ field: name, message: 'must be an array of {field, operator, value}' }]);
  if (input.length > MAX_CONDITIONS) throw errors.validation([{ field: name, message: `must have at most ${MAX_CONDITIONS} conditions` }]);
  const problems: FieldProblem[] = [];
  const compiled: Compiled[] = [];
  const customKeys = input
    .map((c) => (c && typeof c === 'object' && typeof (c as Condition).field === 'string' ? (c as Condition).field : ''))
    .filter((f) => f.startsWith('custom_fields.')).map((f) => f.slice('custom_fields.'.length));
  const customFields = customKeys.length ? await customFieldsByKey(ctx, customKeys) : new Map<string, FieldDefinition>();

  for (const [i, raw] of input.entries()) {
    const at = `${name}.${i}`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) { problems.push({ field: at, message: 'must be an object {field, operator, value}' }); continue; }
    const extra = Object.keys(raw).filter((k) => !['field', 'operator', 'value'].includes(k));
    if (extra.length) problems.push({ field: `${at}.${extra[0]}`, message: 'is not a condition property' });
    const { field, operator, value } = raw as Condition;
    if (typeof field !== 'string') { problems.push({ field: `${at}.field`, message: 'is required' }); continue; }
    // Own keys only: a field named `toString` or `__proto__` is simply unknown.
    let allowed: readonly Operator[] | undefined = Object.hasOwn(FIELD_OPERATORS, field) ? FIELD_OPERATORS[field] : undefined;
    let custom: FieldDefinition | undefined;
    if (field.startsWith('custom_fields.')) {
      custom = customFields.get(field.slice('custom_fields.'.length));
      if (!custom) { problems.push({ field: `${at}.field`, message: 'names no custom field' }); continue; }
      allowed = CUSTOM_OPERATORS[custom.kind];
    }
    if (!allowed) { problems.push({ field: `${at}.field`, message: `must be one of ${[...Object.keys(FIELD_OPERATORS), 'custom_fields.<key>'].join(', ')}` }); continue; }
    if (typeof operator !== 'string' || !allowed.includes(operator as Operator)) {
      problems.push({ field: `${at}.operator`, message: `must be one of ${allowed.join(', ')} for ${field}` });
      continue;
    }
    const op = operator as Operator;
    const list = op === 'in' ? value : [value];
    if (!Array.isArray(list) || list.length === 0 || list.length > MAX_IN) {
      problems.push({ field: `${at}.value`, message: `must be a list of 1 to ${MAX_IN} values for in` });
      continue;
    }
    const bad = (message: string) => problems.push({ field: `${at}.value`, message });
    const result = await compileOne(ctx, field, op, list, custom, bad);
    if (result) compiled.push(result);
  }
  if (problems.length) throw errors.validation(problems);
  return compiled;
}

async function compileOne(
  ctx: Ctx, field: string, op: Operator, list: unknown[], custom: FieldDefinition | undefined, bad: (m: string) => void,
): Promise<Compiled | null> {
  const eqOp = op as 'eq' | 'neq' | 'in';
  if (custom) {
    const kindOk = (v: unknown) => (custom.kind === 'bool' ? typeof v === 'boolean' : isText(v));
    if (!list.every(kindOk)) { bad(custom.kind === 'bool' ? 'must be true or false' : 'must be text (at most 1000 characters)'); return null; }
    if (custom.kind === 'date' && !list.every((v) => /^\d{4}-\d{2}-\d{2}$/.test(v as string))) { bad('must be a date YYYY-MM-DD'); return null; }
    return { kind: 'custom', key: custom.key, field: custom, operator: op, values: list as Array<string | boolean> };
  }
  switch (field) {
    case 'status':
    case 'priority':
    case 'type': {
      const ids: Array<string | null> = [];
      for (const v of list) {
        if (v === null && field === 'type') { ids.push(null); continue; }
        if (!isText(v)) { bad(`must be a ${field} key, name or id`); return null; }
        const row = field === 'status'
          ? await Status.scoped(ctx).where((w) => (isUuid(v) ? w.where('statuses.id', v) : w.where('statuses.key', v))).first()
          : field === 'priority'
            ? await Priority.scoped(ctx).where((w) => (isUuid(v) ? w.where('priorities.id', v) : w.where('priorities.key', v))).first()
            : await TicketType.scoped(ctx).where((w) => (isUuid(v) ? w.where('ticket_types.id', v) : w.whereRaw('lower(ticket_types.name) = lower(?)', [v]))).first();
        if (!row) { bad(`${JSON.stringify(v)} is not a ${field} of this tenant`); return null; }
        ids.push(row.id);
      }
      return { kind: 'column', column: `tickets.${field}_id`, operator: eqOp, values: ids };
    }
    case 'channel':
      if (!list.every((v) => (CHANNELS as readonly unknown[]).includes(v))) { bad(`must be one of ${CHANNELS.join(', ')}`); return null; }
      return { kind: 'column', column: 'tickets.channel', operator: eqOp, values: list as string[] };
    case 'team_id':
    case 'assigned_agent_id':
      if (!list.every((v) => v === null || isUuid(v))) { bad('must be a uuid or null'); return null; }
      // Lowercased: the database compares uuids without case, the in-memory test compares text.
      return { kind: 'column', column: `tickets.${field}`, operator: eqOp, values: (list as Array<string | null>).map((v) => v?.toLowerCase() ?? null) };
    case 'tag':
      if (!list.every(isText)) { bad('must be a tag name'); return null; }
      return { kind: 'tag', operator: eqOp, values: (list as string[]).map((t) => t.trim().toLowerCase()) };
    case 'subject':
      if (!isText(list[0])) { bad('must be text (at most 1000 characters)'); return null; }
      return { kind: 'subject', operator: op as 'eq' | 'neq' | 'contains', value: list[0] };
  }
  return null;
}

/**
 * THE evaluator: each kind of condition states its SQL and its in-memory test side by side, so the
 * ticket list (`applyConditions`) and the routing rules (`matchesConditions`) read one definition
 * and cannot disagree (test/integration/automation/conditions-agree.test.ts checks both on
 * generated tickets). Text comparisons that ignore case fold with lower() in SQL and
 * toLowerCase() in memory (they agree on every letter but a few special casings such as the
 * Turkish dotted I); order comparisons use the C collation, i.e. code-point order, as JS does.
 */
export type ConditionSubject = Pick<Ticket, 'subject' | 'tags' | 'custom_fields' | 'status_id' | 'priority_id' | 'type_id' | 'channel' | 'team_id' | 'assigned_agent_id'>;
type Row = ConditionSubject;
interface Evaluator<C extends Compiled> {
  sql(qb: QueryBuilderType<Ticket>, c: C): void;
  test(t: Row, c: C): boolean;
}
type ByKind = { [K in Compiled['kind']]: Evaluator<Extract<Compiled, { kind: K }>> };

const containsFolded = (text: unknown, part: string) => typeof text === 'string' && text.toLowerCase().includes(part.toLowerCase());
const columnOf = (column: string) => column.slice('tickets.'.length);
const customText = (t: Row, key: string): string | null => {
  const v = (t.custom_fields ?? {})[key];
  // jsonb ->> gives the text of a scalar: strings as they are, true/false and numbers as JSON.
  return v === undefined || v === null ? null : typeof v === 'string' ? v : JSON.stringify(v);
};
const customEquals = (t: Row, key: string, value: unknown) => (t.custom_fields ?? {})[key] === value;

const EVALUATORS: ByKind = {
  column: {
    sql(qb, c) {
      const present = c.values.filter((v): v is string => v !== null);
      if (c.operator === 'neq') {
        qb.where((w) => {
          for (const v of c.values) v === null ? w.whereNotNull(c.column) : w.whereRaw('?? IS DISTINCT FROM ?', [c.column, v]);
        });
      } else {
        qb.where((w) => {
          if (present.length) w.whereIn(c.column, present);
          if (c.values.includes(null)) w.orWhereNull(c.column);
        });
      }
    },
    test(t, c) {
      const actual = ((t as unknown as Record<string, unknown>)[columnOf(c.column)] as string | null | undefined) ?? null;
      const hit = c.values.includes(actual);
      return c.operator === 'neq' ? !hit : hit;
    },
  },
  tag: {
    sql(qb, c) {
      if (c.operator === 'neq') qb.whereRaw('NOT (tickets.tags @> ?::text[])', [c.values]);
      else if (c.operator === 'eq') qb.whereRaw('tickets.tags @> ?::text[]', [c.values]);
      else qb.whereRaw('tickets.tags && ?::text[]', [c.values]);
    },
    test(t, c) {
      const tags = t.tags ?? [];
      if (c.operator === 'in') return c.values.some((v) => tags.includes(v));
      const all = c.values.every((v) => tags.includes(v));
      return c.operator === 'eq' ? all : !all;
    },
  },
  subject: {
    sql(qb, c) {
      if (c.operator === 'eq') qb.where('tickets.subject', c.value);
      else if (c.operator === 'neq') qb.whereNot('tickets.subject', c.value);
      else qb.whereRaw('strpos(lower(tickets.subject), lower(?)) > 0', [c.value]);
    },
    test(t, c) {
      if (c.operator === 'eq') return t.subject === c.value;
      if (c.operator === 'neq') return t.subject !== c.value;
      return containsFolded(t.subject, c.value);
    },
  },
  custom: {
    sql(qb, c) {
      const key = c.key;
      const v = c.values[0];
      const has = (x: unknown) => JSON.stringify({ [key]: x });
      if (c.operator === 'eq') qb.whereRaw('tickets.custom_fields @> ?::jsonb', [has(v)]);
      else if (c.operator === 'in') qb.where((w) => { for (const x of c.values) w.orWhereRaw('tickets.custom_fields @> ?::jsonb', [has(x)]); });
      else if (c.operator === 'neq') qb.whereRaw('NOT (tickets.custom_fields @> ?::jsonb)', [has(v)]);
      else if (c.operator === 'contains') qb.whereRaw('strpos(lower(tickets.custom_fields ->> ?), lower(?)) > 0', [key, String(v)]);
      // Dates are stored as YYYY-MM-DD text, whose code-point order is the calendar's.
      else if (c.operator === 'gt') qb.whereRaw('(tickets.custom_fields ->> ?) COLLATE "C" > ?', [key, v]);
      else if (c.operator === 'lt') qb.whereRaw('(tickets.custom_fields ->> ?) COLLATE "C" < ?', [key, v]);
    },
    test(t, c) {
      const v = c.values[0];
      if (c.operator === 'eq') return customEquals(t, c.key, v);
      if (c.operator === 'in') return c.values.some((x) => customEquals(t, c.key, x));
      if (c.operator === 'neq') return !customEquals(t, c.key, v);
      const text = customText(t, c.key);
      if (text === null) return false;
      if (c.operator === 'contains') return containsFolded(text, String(v));
      return c.operator === 'gt' ? text > String(v) : text < String(v);
    },
  },
};

/** Adds the compiled conditions to a ticket query (AND). */
export function applyConditions(qb: QueryBuilderType<Ticket>, conditions: readonly Compiled[]): void {
  for (const c of conditions) (EVALUATORS[c.kind] as Evaluator<Compiled>).sql(qb, c);
}

/** Does a ticket (a row as stored) meet every compiled condition? The list's rule, in memory. */
export function matchesConditions(ticket: Row, conditions: readonly Compiled[]): boolean {
  return conditions.every((c) => (EVALUATORS[c.kind] as Evaluator<Compiled>).test(ticket, c));
}
