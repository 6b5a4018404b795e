/**
 * The retry ladder (SPEC "Delivery rules" 4, CONTRACT §6): after a failed attempt n (1-based) the
 * next one comes RETRY_DELAYS[n-1] later; after the fifth retry (the sixth attempt) fails, the
 * delivery is dead. A manual retry starts the ladder afresh.
 */
export const RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 6 * 3_600_000] as const;

export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** When to try again after failed attempt `attempt`, or null: dead. */
export function nextAttemptAfter(attempt: number, now: Date): Date | null {
  const delay = RETRY_DELAYS_MS[attempt - 1];
  return delay === undefined ? null : new Date(now.getTime() + delay);
}
