import type { Ctx } from '../core/context.js';
import { iso, previousPeriod, type Filters } from './filters.js';
import { overviewMetrics } from './overview.js';
import { inReportSnapshot } from './rollup.js';

export interface Compared {
  value: number | null;
  previous: number | null;
  /** value − previous; null when either is null. */
  change: number | null;
  /** (value − previous) ÷ previous; null when previous is null or 0. */
  change_ratio: number | null;
}

const compare = (value: number | null, previous: number | null): Compared => ({
  value, previous,
  change: value === null || previous === null ? null : value - previous,
  change_ratio: value === null || !previous ? null : (value - previous) / previous,
});

/**
 * BI overview (CONTRACT §18): every overview metric, the reopen rate and the one-touch resolution
 * rate, each beside its value in the previous period (the window of the same length just before).
 */
export async function analyticsOverview(ctx: Ctx, f: Filters) {
  const prev = previousPeriod(f);
  // Both periods in one snapshot (one transaction, the statements one after the other).
  const [now, before] = await inReportSnapshot(ctx, async (ctx) => [await overviewMetrics(ctx, f, true), await overviewMetrics(ctx, prev, true)]);
  const current = now as unknown as Record<string, number | null>;
  const previous = before as unknown as Record<string, number | null>;
  const metrics = Object.fromEntries(Object.keys(current).map((k) => [k, compare(current[k]!, previous[k]!)]));
  return { from: iso(f.from)!, to: iso(f.to)!, previous_from: iso(prev.from)!, previous_to: iso(prev.to)!, ...metrics };
}
