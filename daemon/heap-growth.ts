import { setFlagsFromString } from 'node:v8';

/**
 * How far the daemon's JavaScript heap may grow past its live data before V8 collects it in full.
 *
 * V8 sizes that growth from the machine and from how fast it has been collecting: on a server with
 * gigabytes to spare it lets the old generation reach up to four times the live data. A daemon
 * under write load promotes much short-lived garbage (a request's objects outlive the young
 * generation's collections while it waits on the database), so its resident memory climbed from
 * ~170 MB to over 330 MB for a live heap of ~70 MB (docs/performance.md). With the growth fixed at
 * `percent` the same load peaked at 220–310 MB with 100 (up to twice the live data), and at
 * 207–214 MB with 50, the default; the extra full collections cost the main thread ~30 ms over a
 * minute and a half of load, and no throughput that the benchmark could tell from its noise.
 *
 * V8 reads this setting at every full collection, so it takes effect at run time. An operator who
 * starts Node.js with `--heap-growing-percent` (a V8 option Node.js refuses in NODE_OPTIONS, so only
 * on its command line) keeps that value; 0 leaves V8's own sizing.
 */
const HEAP_GROWING_FLAG = '--heap-growing-percent';

export type HeapGrowth = { percent: number; source: 'config' } | { percent: null; source: 'node-command-line' | 'v8-default' };

/** What the daemon's heap growth should be, given its setting and the options Node.js started with. */
export function heapGrowthFor(percent: number, execArgv: readonly string[]): HeapGrowth {
  // V8 takes its options with `_` or `-` between the words.
  if (execArgv.some((option) => option.replace(/_/g, '-').startsWith(`${HEAP_GROWING_FLAG}=`))) return { percent: null, source: 'node-command-line' };
  if (percent === 0) return { percent: null, source: 'v8-default' };
  return { percent, source: 'config' };
}

/** Applies the daemon's heap growth to this process (once, at start-up) and says what it chose. */
export function applyHeapGrowth(percent: number): HeapGrowth {
  const growth = heapGrowthFor(percent, process.execArgv);
  if (growth.percent !== null) setFlagsFromString(`${HEAP_GROWING_FLAG}=${growth.percent}`);
  return growth;
}
