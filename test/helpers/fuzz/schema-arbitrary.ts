import fc from 'fast-check';
import { textProblem } from '../../../src/core/text.js';

/**
 * Valid values for the JSON Schema subset TypeBox produces in this API, as fast-check
 * arbitraries: objects (required, optional, additionalProperties / patternProperties), strings
 * (enum, format, pattern, lengths), integers and numbers within bounds, booleans, null, arrays,
 * `anyOf` and `type: [x, 'null']`, `const`, and free JSON values (`{}`). Strings mix plain ASCII
 * with any Unicode character (astral planes, combining marks, right-to-left text): valid input
 * that is odd is still valid. Values always satisfy the shared text rule (no control characters).
 */
export type Schema = Record<string, any>;

const codePoints = (value: string) => [...value].length;

function typesOf(schema: Schema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  if (typeof schema.type === 'string') return [schema.type];
  return [];
}

/** Free text: ASCII words most of the time, any Unicode character otherwise. */
function text(min: number, max: number): fc.Arbitrary<string> {
  const upper = Math.min(max, min + 40);
  return fc
    .oneof(
      { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: min, maxLength: upper }) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: min, maxLength: upper }) },
      { weight: 1, arbitrary: fc.constantFrom('Zoë Ångström', 'مرحبا بالعالم', '👩‍💻 dev', 'a\u0301e\u0301', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '\u200Bzero width') },
    )
    .filter((s) => codePoints(s) >= min && codePoints(s) <= max && textProblem(s) === null);
}

const word = fc.stringMatching(/^[a-z][a-z0-9]{0,11}$/);

function email(max: number): fc.Arbitrary<string> {
  return fc.tuple(word, word).map(([local, host]) => `${local}@${host}.test`).filter((s) => s.length <= max);
}

function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  if (schema.enum) return fc.constantFrom(...(schema.enum as string[]));
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? 200;
  const fits = (s: string) => codePoints(s) >= min && codePoints(s) <= max;
  const pattern = schema.pattern ? new RegExp(schema.pattern, 'u') : null;
  const matches = (s: string) => !pattern || pattern.test(s);
  switch (schema.format) {
    case 'uuid': return fc.uuid();
    case 'date-time': return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'date': return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    case 'email': return email(max);
    case 'uri': return fc.webUrl({ validSchemes: ['https', 'http'] }).filter((s) => fits(s) && matches(s) && textProblem(s) === null);
  }
  if (pattern) {
    return fc.stringMatching(pattern).filter((s) => fits(s) && textProblem(s) === null);
  }
  return text(min, max);
}

/** A free JSON value (`{}` in the schema), small, within the text rule. */
export const freeJson: fc.Arbitrary<unknown> = fc
  .jsonValue({ maxDepth: 2 })
  .filter((value) => !/"(__proto__|constructor|prototype)"/.test(JSON.stringify(value) ?? ''))
  .filter((value) => !JSON.stringify(value)?.match(/\\u00[01][0-9a-f]|\\u[dD][89abAB]/) );

function objectArbitrary(schema: Schema): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set<string>(schema.required ?? []);
  const fixed = fc.record(
    Object.fromEntries(Object.entries(properties).map(([name, child]) => [name, arbitraryFor(child)])),
    { requiredKeys: Object.keys(properties).filter((name) => required.has(name)) },
  );
  const extra = schema.patternProperties
    ? Object.values(schema.patternProperties as Record<string, Schema>)[0]!
    : typeof schema.additionalProperties === 'object' ? schema.additionalProperties as Schema : null;
  if (!extra) return fixed as fc.Arbitrary<Record<string, unknown>>;
  const key = fc.stringMatching(/^[a-z][a-z0-9_]{0,15}$/).filter((k) => !(k in properties) && !['__proto__', 'constructor', 'prototype'].includes(k));
  return fc.tuple(fixed, fc.dictionary(key, arbitraryFor(extra), { maxKeys: 3 })).map(([a, b]) => ({ ...b, ...a }));
}

export function arbitraryFor(schema: Schema): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.anyOf) return fc.oneof(...(schema.anyOf as Schema[]).map(arbitraryFor));
  const types = typesOf(schema);
  if (!types.length) return freeJson;
  return fc.oneof(...types.map((type) => {
    switch (type) {
      case 'null': return fc.constant(null);
      case 'boolean': return fc.boolean();
      case 'integer': return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
      case 'number': return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
      case 'string': return stringArbitrary(schema);
      case 'array': return fc.array(arbitraryFor(schema.items ?? {}), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 5, (schema.minItems ?? 0) + 5) });
      case 'object': return objectArbitrary(schema);
      default: throw new Error(`The fuzzer cannot generate values of type ${type}; teach test/helpers/fuzz/schema-arbitrary.ts`);
    }
  }));
}
