import { Type, type Static, type TSchema } from '@sinclair/typebox';

/**
 * Small TypeBox builders the API schemas share. They exist because the obvious TypeBox forms
 * (`Type.Union` of literals, of `T | null`) compile to `anyOf`, whose validation errors come out as
 * three or four problems for one bad field; `enum` and `type: [T, 'null']` give exactly one.
 */

/** A string from a fixed list: one `enum` problem ("must be one of a, b, c") when it is not. */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** `T | null` for a primitive schema (string, integer, number, boolean). */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type as string, 'null'] });
}

/** An RFC 3339 timestamp (input accepts any offset; output is UTC with ms and `Z`). */
export const Timestamp = (options: Record<string, unknown> = {}) => Type.String({ format: 'date-time', ...options });

/**
 * Patterns with a message of their own: validation says "must not be blank" rather than
 * "must match pattern \S". The daemon's error translation looks messages up here.
 */
const PATTERN_MESSAGES = new Map<string, string>();

export function patternMessage(pattern: string): string {
  return PATTERN_MESSAGES.get(pattern) ?? `must match the pattern ${pattern}`;
}

export function withMessage(pattern: string, message: string): string {
  PATTERN_MESSAGES.set(pattern, message);
  return pattern;
}

const NOT_BLANK = withMessage('\\S', 'must not be blank');
const HTTP_URL = withMessage('^https?://[^\\s/?#]+', 'must be an http or https URL');

/** Text that must hold something besides white space (names, titles). */
export const NonBlank = (options: { maxLength: number } & Record<string, unknown>) => Type.String({ pattern: NOT_BLANK, ...options });

/** An absolute http(s) URL with a host. */
export const HttpUrl = (options: { maxLength: number } & Record<string, unknown>) =>
  Type.String({ format: 'uri', pattern: HTTP_URL, ...options });

/** Path parameters of a route addressing one resource by id (a malformed id answers 404). */
export const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
