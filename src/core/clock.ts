/**
 * Time is an input (ARCHITECTURE rule 5): business logic reads `ctx.now`, never the wall clock.
 * Only the edges (an HTTP request arriving, a job run, a CLI command) call `systemNow()`.
 */
export type Clock = () => Date;

export const systemNow: Clock = () => new Date();

/** RFC 3339 UTC with milliseconds and `Z`, the contract's timestamp form. */
export function toRfc3339(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return isoString(value instanceof Date ? value : new Date(value));
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * `Date.prototype.toISOString`, composed in JavaScript for four-digit years: V8 formats it through
 * a printf-style routine at ~0.4 µs a call, and a list page formats about a hundred
 * (docs/performance.md); this takes ~0.16 µs. Other years, and invalid dates (which throw), go to V8.
 */
function isoString(date: Date): string {
  const year = date.getUTCFullYear();
  if (!(year >= 1000 && year <= 9999)) return date.toISOString();
  return `${year}-${pad2(date.getUTCMonth() + 1)}-${pad2(date.getUTCDate())}T${pad2(date.getUTCHours())}:${pad2(date.getUTCMinutes())}:${pad2(date.getUTCSeconds())}.${pad3(date.getUTCMilliseconds())}Z`;
}

export function addSeconds(date: Date, seconds: number): Date {
  return new Date(date.getTime() + seconds * 1000);
}

/** Parses an RFC 3339 timestamp (any offset); returns null when it is not one. */
export function parseRfc3339(value: string): Date | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(value)) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}
