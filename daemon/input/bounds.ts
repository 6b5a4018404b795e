import type { RouteSchema } from '../route-types.js';

/**
 * Every value a request can carry is bounded by its schema, so no input reaches the database
 * beyond what a column, an index or a query can take: a string has `maxLength` (or is an enum or
 * a fixed format), a number `minimum` and `maximum` (PostgreSQL integers overflow, JavaScript loses
 * precision past 2^53), an array `maxItems` (a query's parameter count is limited). Registration
 * refuses a request schema that forgets one, naming the field, so later routes inherit the rule.
 */
const BOUNDED_FORMATS = new Set(['uuid', 'date-time', 'date', 'time']);

type Schema = Record<string, unknown>;

function typesOf(schema: Schema): string[] {
  const type = schema.type;
  return Array.isArray(type) ? (type as string[]) : typeof type === 'string' ? [type] : [];
}

function missingBound(schema: Schema): string | null {
  if ('enum' in schema || 'const' in schema) return null;
  const types = typesOf(schema);
  if (types.includes('string') && schema.maxLength === undefined && !BOUNDED_FORMATS.has(String(schema.format))) return 'maxLength';
  if ((types.includes('integer') || types.includes('number'))) {
    if (schema.maximum === undefined && schema.exclusiveMaximum === undefined) return 'maximum';
    if (schema.minimum === undefined && schema.exclusiveMinimum === undefined) return 'minimum';
  }
  if (types.includes('array') && schema.maxItems === undefined) return 'maxItems';
  return null;
}

function check(schema: unknown, path: string, problems: string[]): void {
  if (!schema || typeof schema !== 'object') return;
  const node = schema as Schema;
  const missing = missingBound(node);
  if (missing) problems.push(`${path || '(root)'} has no ${missing}`);
  for (const [name, child] of Object.entries((node.properties ?? {}) as Record<string, unknown>)) check(child, path ? `${path}.${name}` : name, problems);
  for (const child of Object.values((node.patternProperties ?? {}) as Record<string, unknown>)) check(child, `${path}.*`, problems);
  if (node.items) check(node.items, `${path}[]`, problems);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) for (const child of (node[key] ?? []) as unknown[]) check(child, path, problems);
}

export function assertBoundedInput(label: string, schema: RouteSchema): void {
  const problems: string[] = [];
  for (const part of ['params', 'querystring', 'body'] as const) {
    const problemsBefore = problems.length;
    check(schema[part], '', problems);
    for (let i = problemsBefore; i < problems.length; i++) problems[i] = `${part} ${problems[i]}`;
  }
  if (problems.length) throw new Error(`Route ${label}: unbounded input (${problems.join('; ')}); every request value needs a bound`);
}
