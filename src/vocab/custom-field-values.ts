import type { Ctx } from '../core/context.js';
import type { FieldProblem } from '../core/errors.js';
import { CustomField } from './models.js';
import { prepared } from '../db/prepared.js';
import { scoped } from '../db/tenant-scope.js';
import { cachedConfig, configPinned } from '../db/config-cache.js';

/**
 * Custom field values on every ticket write, validated against each field's kind (CONTRACT §4:
 * `custom_fields: {"<key>": value}`). Each problem is named `custom_fields.<key>`. `null` clears a
 * value (refused for a required field). Inactive fields keep their stored values but take no new ones.
 */
export const MAX_TEXT_VALUE = 10_000;

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

function isCalendarDate(value: string): boolean {
  const m = DATE_RE.exec(value);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

/** Why `value` does not fit `field`, or null when it does. */
function kindProblem(field: FieldDefinition, value: unknown): string | null {
  switch (field.kind) {
    case 'text':
      if (typeof value !== 'string') return 'must be a string';
      return value.length > MAX_TEXT_VALUE ? `must be at most ${MAX_TEXT_VALUE} characters` : null;
    case 'select':
      return typeof value === 'string' && field.options.includes(value) ? null : `must be one of ${field.options.join(', ')}`;
    case 'bool':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'date':
      return typeof value === 'string' && isCalendarDate(value) ? null : 'must be a date YYYY-MM-DD';
  }
}

/** What validating a value needs of a field's definition. */
export type FieldDefinition = Pick<CustomField, 'key' | 'kind' | 'options' | 'required' | 'active'>;

const DEFINITION_COLUMNS = ['key', 'kind', 'options', 'required', 'active'] as const;

/**
 * The tenant's fields by key (all of them, or those of `keys`), such that a concurrent delete of
 * one waits for this write: a write that pinned the configuration version takes them from the
 * configuration cache (the pin holds the configuration lock that the delete takes exclusively,
 * src/db/config-cache.ts); any other reads and share-locks their rows.
 */
export async function customFieldsByKey(ctx: Ctx, keys?: string[]): Promise<Map<string, FieldDefinition>> {
  if (configPinned(ctx)) {
    const all = await cachedConfig(ctx, 'custom_fields', () =>
      prepared(scoped(ctx, 'custom_fields').select(DEFINITION_COLUMNS.map((column) => `custom_fields.${column}`))) as Promise<FieldDefinition[]>);
    const wanted = keys ? new Set(keys) : null;
    return new Map(all.filter((f) => !wanted || wanted.has(f.key)).map((f) => [f.key, f]));
  }
  const qb = CustomField.scoped(ctx);
  if (keys) qb.whereIn('custom_fields.key', keys);
  const rows = await prepared(qb.forShare());
  return new Map(rows.map((f) => [f.key, f]));
}

export interface CustomFieldCheck {
  /** The values after the write: `current` with the input applied, cleared keys removed. */
  values: Record<string, unknown>;
  problems: FieldProblem[];
}

/**
 * Applies `input` to `current` (a create starts from `{}`). On create (`creating`), every active
 * required field must end up with a value.
 */
export function checkCustomFieldValues(
  fields: Map<string, FieldDefinition>,
  current: Record<string, unknown>,
  input: Record<string, unknown>,
  creating: boolean,
): CustomFieldCheck {
  const values = { ...current };
  const problems: FieldProblem[] = [];
  for (const [key, value] of Object.entries(input)) {
    const name = `custom_fields.${key}`;
    const field = fields.get(key);
    if (!field) { problems.push({ field: name, message: 'is not a custom field' }); continue; }
    if (!field.active) { problems.push({ field: name, message: 'is retired (inactive) and takes no new values' }); continue; }
    if (value === null) {
      if (field.required) problems.push({ field: name, message: 'is required' });
      else delete values[key];
      continue;
    }
    const problem = kindProblem(field, value);
    if (problem) problems.push({ field: name, message: problem });
    else values[key] = value;
  }
  if (creating) {
    for (const field of fields.values()) {
      if (field.active && field.required && !(field.key in input) && values[field.key] === undefined) {
        problems.push({ field: `custom_fields.${field.key}`, message: 'is required' });
      }
    }
  }
  return { values, problems };
}
