import AjvCompiler from '@fastify/ajv-compiler';

/**
 * Two Ajv instances, one per kind of input. Query strings and path parameters arrive as text, so
 * they are coerced to the schema's types (`?page=2` is the integer 2, `?role=a&role=b` an array).
 * A JSON body already carries its types: coercing it would turn `{"quota": false}` into 0 and
 * `{"name": false}` into "false", so a body of the wrong JSON type is refused (422) instead.
 * Both keep Fastify's defaults otherwise (its ajv-formats formats), report every problem at once
 * (`allErrors`, bounded by the body limit) and fill schema defaults.
 */
const shared = { allErrors: true, removeAdditional: false, useDefaults: true } as const;

interface RouteDefinition {
  schema: unknown;
  method: string;
  url: string;
  httpPart?: string;
}

type Compile = (route: RouteDefinition) => unknown;

export function buildValidator(externalSchemas: Record<string, unknown>): Compile {
  const pool = AjvCompiler() as unknown as (schemas: Record<string, unknown>, options: object) => Compile;
  const body = pool(externalSchemas, { customOptions: { ...shared, coerceTypes: false } });
  const text = pool(externalSchemas, { customOptions: { ...shared, coerceTypes: 'array' } });
  return (route) => (route.httpPart === 'body' ? body(route) : text(route));
}
