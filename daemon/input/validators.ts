import AjvCompiler from '@fastify/ajv-compiler';

/**
 * Two Ajv instances, one per kind of input. Query strings and path parameters arrive as text, so
 * they are coerced to the schema's types (`?page=2` is the integer 2, `?role=a&role=b` an array).
 * A JSON body already carries its types: coercing it would turn `{"quota": false}` into 0 and
 * `{"name": false}` into "false", so a body of the wrong JSON type is refused (422) instead.
 * Both keep Fastify's defaults otherwise (its ajv-formats formats), report every problem at once
 * (`allErrors`, bounded by the body limit) and fill schema defaults.
 *
 * Compiled validators are kept per process by the schema's content: an app built again in the same
 * process (a test file builds dozens) reuses them instead of compiling every route's schemas anew,
 * which was most of the time `buildApp` took. A validator is a pure function of its schema, the
 * shared schemas and the options, all three in its key.
 */
const shared = { allErrors: true, removeAdditional: false, useDefaults: true } as const;

interface RouteDefinition {
  schema: unknown;
  method: string;
  url: string;
  httpPart?: string;
}

type Compile = (route: RouteDefinition) => unknown;

/** One Ajv per (shared schemas, options), as Fastify's own pool keys them, for the whole process. */
const pool = AjvCompiler() as unknown as (schemas: Record<string, unknown>, options: object) => Compile;
const compiled = new Map<string, unknown>();

export function buildValidator(externalSchemas: Record<string, unknown>): Compile {
  const body = pool(externalSchemas, { customOptions: { ...shared, coerceTypes: false } });
  const text = pool(externalSchemas, { customOptions: { ...shared, coerceTypes: 'array' } });
  const externals = JSON.stringify(externalSchemas);
  return (route) => {
    const kind = route.httpPart === 'body' ? 'body' : 'text';
    const key = `${kind}\n${externals}\n${JSON.stringify(route.schema)}`;
    let validate = compiled.get(key);
    if (validate === undefined) {
      validate = (kind === 'body' ? body : text)(route);
      compiled.set(key, validate);
    }
    return validate;
  };
}
