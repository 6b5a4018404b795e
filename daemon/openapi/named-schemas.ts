import { isDeepStrictEqual } from 'node:util';
import type { RouteSchema } from '../route-types.js';

/**
 * Schemas with an `$id` are shared: they become named components of the OpenAPI document, and
 * Ajv compiles one of them per name. Two different schemas under one name would silently validate
 * one route against the other's schema, so registration refuses them.
 */
const seen = new WeakMap<object, Map<string, unknown>>();

function walk(schema: unknown, visit: (named: Record<string, unknown>) => void): void {
  if (!schema || typeof schema !== 'object') return;
  if (Array.isArray(schema)) return schema.forEach((item) => walk(item, visit));
  const record = schema as Record<string, unknown>;
  if (typeof record.$id === 'string') visit(record);
  for (const value of Object.values(record)) walk(value, visit);
}

export function checkNamedSchemas(app: object, label: string, schema: RouteSchema): void {
  const names = seen.get(app) ?? new Map<string, unknown>();
  seen.set(app, names);
  const parts = [schema.params, schema.querystring, schema.body, ...Object.values(schema.response ?? {})];
  walk(parts, (named) => {
    const name = named.$id as string;
    const known = names.get(name);
    if (known === undefined) names.set(name, named);
    else if (known !== named && !isDeepStrictEqual(known, named)) {
      throw new Error(`Route ${label}: a different schema is already named ${name}; rename one of them`);
    }
  });
}
