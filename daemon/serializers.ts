import SerializerSelector from '@fastify/fast-json-stringify-compiler';

/**
 * Fastify's own response serializers (fast-json-stringify), kept per process by the schema's
 * content: an app built again in the same process reuses them instead of compiling every route's
 * response schemas anew (see daemon/input/validators.ts for the same with validators). A
 * serializer is a pure function of its schema, the shared schemas and the options, all three in
 * its key.
 */
type Compile = (route: { schema: unknown; method: string; url: string; httpStatus?: string }) => unknown;

const factory = SerializerSelector() as unknown as (externalSchemas: unknown, options: unknown) => Compile;
const compiled = new Map<string, unknown>();

export function buildSerializer(externalSchemas: unknown, options: unknown): Compile {
  const compile = factory(externalSchemas, options);
  const shared = JSON.stringify([externalSchemas, options]);
  return (route) => {
    const key = `${shared}\n${JSON.stringify(route.schema)}`;
    let serialize = compiled.get(key);
    if (serialize === undefined) {
      serialize = compile(route);
      compiled.set(key, serialize);
    }
    return serialize;
  };
}
