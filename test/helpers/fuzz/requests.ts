import fc from 'fast-check';
import type { RouteDef } from '../../../daemon/route.js';
import { BODY_METHODS } from '../../../daemon/openapi/error-responses.js';
import { arbitraryFor, type Schema } from './schema-arbitrary.js';
import { PNG_1X1, multipart } from '../conversation.js';

/**
 * Requests for one route, generated from its schemas: valid ones, and invalid ones of every kind
 * an outside fuzzer tries (wrong JSON types, missing and extra fields, huge numbers, control
 * characters, very long strings, lone surrogates, malformed JSON, wrong content types, broken path
 * ids, unusual methods). Each says what it is, so the test knows what to expect.
 */
export type Kind = 'valid' | 'invalid' | 'path' | 'method';

export interface FuzzRequest {
  kind: Kind;
  /** What was done, for failure messages. */
  label: string;
  method: string;
  /** Path with its parameters filled in, query string included. */
  url: string;
  payload?: string | Buffer;
  contentType?: string;
}

/** Path parameter values by the segment before them (`users/:id`) or by name. */
export type IdPool = (segment: string, param: string) => string[];

const CONTROL = ['\u0000', '\u0001', '\u0007', '\u001b', '\u001f', '\u000b'];
const LONG = ['x'.repeat(100_000), '€'.repeat(100_000), '🙂'.repeat(60_000)];
const HUGE = [1e20, -1e20, 2 ** 53 + 2, 1e308, -1e308, 0.5, 99_999_999_999];
const MALFORMED = ['{"a":', '[1,2', 'nul', '{"a":1,}', "{'a':1}", '{"a":1}}', '"unterminated', '{"a":NaN}', '\u0000', '{"__proto__":{"x":1}}'];
const MEDIA = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/octet-stream'];
const METHODS = ['QUERY', 'PROPFIND', 'OPTIONS', 'TRACE', 'MKCOL'];
const BAD_IDS = ['not-a-uuid', '%00', 'a%00b', 'x'.repeat(5000), '%E0%A4%A', '%F0%9F%99%82', '0190a1b2-0000-7000-8000-00000000000G', "1'%20or%20'1'='1", '%2e%2e'];
const SURROGATE_MARK = 'LONE-SURROGATE-HERE';

function typesOf(schema: Schema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  return typeof schema.type === 'string' ? [schema.type] : [];
}

/** A JSON value whose type the schema does not allow (none for a free JSON value). */
function wrongTypeFor(schema: Schema): fc.Arbitrary<unknown> | null {
  const types = typesOf(schema);
  if (!types.length || 'const' in schema) return null;
  const candidates: Array<[string, unknown]> = [['string', 'text'], ['integer', 7], ['number', 1.5], ['boolean', true], ['null', null], ['array', [1]], ['object', { a: 1 }]];
  const wrong = candidates.filter(([type, value]) => !types.includes(type) && !(type === 'integer' && types.includes('number')) && !(type === 'number' && typeof value === 'number' && types.includes('number')));
  return wrong.length ? fc.constantFrom(...wrong.map(([, value]) => value)) : null;
}

function stringProps(schema: Schema | undefined): string[] {
  return Object.entries((schema?.properties ?? {}) as Record<string, Schema>)
    .filter(([, child]) => typesOf(child).includes('string') && !child.enum && !child.format)
    .map(([name]) => name);
}

function numberProps(schema: Schema | undefined): string[] {
  return Object.entries((schema?.properties ?? {}) as Record<string, Schema>)
    .filter(([, child]) => typesOf(child).some((t) => t === 'integer' || t === 'number'))
    .map(([name]) => name);
}

function queryString(query: Record<string, unknown> | undefined): string {
  const pairs = Object.entries(query ?? {}).flatMap(([key, value]) =>
    (Array.isArray(value) ? value : [value]).map((v) => `${encodeURIComponent(key)}=${encodeURIComponent(String(v))}`));
  return pairs.length ? `?${pairs.join('&')}` : '';
}

function fillPath(url: string, values: string[]): string {
  let i = 0;
  return url.replace(/:(\w+)/g, () => values[i++]!);
}

/** Query values the parameter's schema refuses: every one of them is text, as a URL carries it. */
function invalidQueryValues(schema: Schema): string[] {
  const types = typesOf(schema);
  const values: string[] = [];
  if (types.includes('integer') || types.includes('number')) {
    values.push('abc', '1e30', '99999999999999999999', '[]');
    if (types.includes('integer')) values.push('1.5');
    if (schema.minimum !== undefined) values.push(String(schema.minimum - 1));
  }
  if (types.includes('boolean')) values.push('maybe', '2');
  if (types.includes('string')) {
    // (Broken UTF-8 such as %ED%A0%80 is no refusal: the query parser decodes it leniently to valid text.)
    values.push('%00', 'a\u0000b', 'a\u001bb');
    if (schema.enum) values.push('not-one-of-them');
    if (schema.maxLength !== undefined) values.push('x'.repeat(schema.maxLength + 1));
    if (schema.format === 'uuid') values.push('not-a-uuid');
    if (schema.format === 'date-time') values.push('yesterday', '2026-13-45T25:61:00Z');
  }
  return values;
}

/** Numbers the schema refuses (beyond its bounds, or not whole for an integer). */
function refusedNumbers(schema: Schema): number[] {
  const integer = typesOf(schema).includes('integer');
  return HUGE.filter((n) => (schema.maximum !== undefined && n > schema.maximum) || (schema.minimum !== undefined && n < schema.minimum) || (integer && !Number.isInteger(n)));
}

const VALID_MAIL = 'From: Fuzz <fuzz@customer.example>\r\nSubject: Fuzz\r\n\r\nA message from the fuzzer.\r\n';

export function requestsFor(def: RouteDef, prefix: string, ids: IdPool): fc.Arbitrary<FuzzRequest> {
  const bodySchema = def.schema.body as Schema | undefined;
  const querySchema = def.schema.querystring as Schema | undefined;
  const params = [...def.url.matchAll(/([\w-]+)\/:(\w+)/g)].map(([, segment, param]) => ids(segment!, param!));
  const hasBody = BODY_METHODS.has(def.method);

  const validParts = fc.record({
    path: fc.tuple(...params.map((pool) => fc.constantFrom(...pool))).map((values) => fillPath(def.url, values as string[])),
    query: querySchema ? (arbitraryFor(querySchema) as fc.Arbitrary<Record<string, unknown>>) : fc.constant(undefined),
    body: bodySchema ? arbitraryFor(bodySchema) : fc.constant(undefined),
  });

  const build = (kind: Kind, label: string, parts: { path: string; query?: Record<string, unknown>; body?: unknown; rawQuery?: string }, raw?: { payload: string | Buffer; contentType?: string }): FuzzRequest => ({
    kind,
    label,
    method: def.method,
    url: prefix + parts.path + (parts.rawQuery ?? queryString(parts.query)),
    ...(raw ?? (parts.body !== undefined ? { payload: JSON.stringify(parts.body), contentType: 'application/json' } : {})),
  });

  // An upload route's valid body is a form with one small image under its declared field (a small
  // text document for the knowledge base's document uploads, which take no images); a raw-body
  // route's a small message of its media type (the inbound mail route).
  const file = def.url.startsWith('/kb-documents')
    ? { filename: 'notes.txt', type: 'text/plain', content: 'Fixture notes: the office opens at nine.' }
    : { filename: 'pixel.png', type: 'image/png', content: PNG_1X1 };
  const form = def.multipart ? multipart([{ name: def.multipart.field, ...file }]) : undefined;
  const validRaw = form
    ? { payload: form.payload, contentType: form.headers['content-type']! }
    : def.rawBody ? { payload: VALID_MAIL, contentType: def.rawBody.contentType } : undefined;
  const variants: Array<fc.Arbitrary<FuzzRequest>> = [validParts.map((p) => build('valid', 'valid', p, validRaw))];
  const weightOfValid = 4;

  if (bodySchema && typesOf(bodySchema).includes('object')) {
    const props = Object.entries((bodySchema.properties ?? {}) as Record<string, Schema>);
    const wrongTyped = props.map(([name, child]) => [name, wrongTypeFor(child)] as const).filter(([, arb]) => arb);
    if (wrongTyped.length) {
      variants.push(fc.tuple(validParts, fc.constantFrom(...wrongTyped)).chain(([p, [name, arb]]) =>
        arb!.map((value) => build('invalid', `body.${name} of a wrong JSON type`, { ...p, body: { ...(p.body as object), [name]: value } }))));
    }
    const required = (bodySchema.required ?? []) as string[];
    if (required.length) {
      variants.push(fc.tuple(validParts, fc.constantFrom(...required)).map(([p, name]) => {
        const { [name]: _gone, ...rest } = p.body as Record<string, unknown>;
        return build('invalid', `body.${name} missing`, { ...p, body: rest });
      }));
    }
    if (bodySchema.additionalProperties === false) {
      variants.push(fc.tuple(validParts, fc.stringMatching(/^[a-z_]{1,20}$/).filter((k) => !(k in (bodySchema.properties ?? {}))))
        .map(([p, key]) => build('invalid', `extra body field ${key}`, { ...p, body: { ...(p.body as object), [key]: 'surprise' } })));
    }
    const numbers = numberProps(bodySchema)
      .map((name) => [name, refusedNumbers((bodySchema.properties as Record<string, Schema>)[name]!)] as const)
      .filter(([, values]) => values.length);
    if (numbers.length) {
      variants.push(fc.tuple(validParts, fc.constantFrom(...numbers)).chain(([p, [name, values]]) => fc.constantFrom(...values).map((value) =>
        build('invalid', `body.${name} = ${value}`, { ...p, body: { ...(p.body as object), [name]: value } }))));
    }
    const strings = stringProps(bodySchema);
    if (strings.length) {
      variants.push(fc.tuple(validParts, fc.constantFrom(...strings), fc.constantFrom(...CONTROL)).map(([p, name, c]) =>
        build('invalid', `body.${name} with U+${c.charCodeAt(0).toString(16)}`, { ...p, body: { ...(p.body as object), [name]: `a${c}b` } })));
      const longable = strings.filter((name) => ((bodySchema.properties as Record<string, Schema>)[name]!.maxLength ?? Infinity) < 60_000);
      if (longable.length) {
        variants.push(fc.tuple(validParts, fc.constantFrom(...longable), fc.constantFrom(...LONG)).map(([p, name, value]) =>
          build('invalid', `body.${name} of ${value.length} UTF-16 units`, { ...p, body: { ...(p.body as object), [name]: value } })));
      }
      variants.push(fc.tuple(validParts, fc.constantFrom(...strings), fc.constantFrom('\\ud800', '\\udfff', 'a\\ud83d')).map(([p, name, escape]) => {
        const payload = JSON.stringify({ ...(p.body as object), [name]: SURROGATE_MARK }).replace(SURROGATE_MARK, escape);
        return build('invalid', `body.${name} with a lone surrogate`, p, { payload, contentType: 'application/json' });
      }));
    }
    // Free JSON objects (custom_fields): control characters in a nested value and in a key.
    const free = props.filter(([, child]) => child.patternProperties || typeof child.additionalProperties === 'object').map(([name]) => name);
    if (free.length) {
      variants.push(fc.tuple(validParts, fc.constantFrom(...free), fc.constantFrom(...CONTROL), fc.boolean()).map(([p, name, c, inKey]) =>
        build('invalid', `body.${name} with U+${c.charCodeAt(0).toString(16)} in a nested ${inKey ? 'key' : 'value'}`, {
          ...p, body: { ...(p.body as object), [name]: inKey ? { [`k${c}`]: 'v' } : { deep: { deeper: [`v${c}`] } } },
        })));
    }
  }
  if (hasBody) {
    variants.push(fc.tuple(validParts, fc.constantFrom(...MALFORMED)).map(([p, payload]) =>
      build('invalid', `malformed JSON ${JSON.stringify(payload)}`, p, { payload, contentType: 'application/json' })));
    variants.push(fc.tuple(validParts, fc.constantFrom(...MEDIA)).map(([p, contentType]) =>
      build('invalid', `content type ${contentType}`, p, { payload: JSON.stringify(p.body ?? {}), contentType })));
  }
  if (querySchema) {
    const qProps = Object.entries((querySchema.properties ?? {}) as Record<string, Schema>)
      .map(([name, child]) => [name, invalidQueryValues(child)] as const)
      .filter(([, values]) => values.length);
    if (qProps.length) {
      variants.push(fc.tuple(validParts, fc.constantFrom(...qProps)).chain(([p, [name, values]]) => fc.constantFrom(...values).map((value) => {
        // A value starting with % (`%00`) goes into the URL as it is.
        const raw = value.startsWith('%') ? `?${encodeURIComponent(name)}=${value}` : queryString({ ...(p.query ?? {}), [name]: value });
        return build('invalid', `query ${name}=${JSON.stringify(value.slice(0, 20))}`, { ...p, rawQuery: raw });
      })));
    }
  }
  if (params.length) {
    variants.push(fc.tuple(validParts, fc.constantFrom(...BAD_IDS)).map(([p, bad]) => {
      const path = fillPath(def.url, params.map(() => bad));
      return build('path', `path id ${JSON.stringify(bad.slice(0, 40))}`, { ...p, path });
    }));
  }
  variants.push(fc.tuple(validParts, fc.constantFrom(...METHODS)).map(([p, method]) => ({ ...build('method', `method ${method}`, p), method })));

  return fc.oneof({ weight: weightOfValid, arbitrary: variants[0]! }, ...variants.slice(1).map((arbitrary) => ({ weight: 1, arbitrary })));
}
