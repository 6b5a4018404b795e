/**
 * Time is an input (ARCHITECTURE rule 5): business logic reads `ctx.now`, never the wall clock.
 * Only the edges (an HTTP request arriving, a job run, a CLI command) call `systemNow()`.
 */
export type Clock = () => Date;

export const systemNow: Clock = () => new Date();

/** RFC 3339 UTC with milliseconds and `Z`, the contract's timestamp form. */
export function toRfc3339(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const date = value instanceof Date ? value : new Date(value);
  return date.toISOString();
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
