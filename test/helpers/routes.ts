import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import type { RouteDef } from '../../daemon/route.js';

/**
 * A body that passes a route's schema, for tests that walk every route: the route's declared
 * example, else a value TypeBox builds from the schema.
 */
export function exampleBody(def: RouteDef): unknown {
  if (def.example?.body !== undefined) return def.example.body;
  if (!def.schema.body) return undefined;
  try {
    return Value.Create(def.schema.body as TSchema);
  } catch {
    return {};
  }
}
