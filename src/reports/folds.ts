import { DateTime } from 'luxon';

const HOUR_MS = 3_600_000;
/** Zone offsets change far less often than this: a sample per step finds every change. */
const STEP_MS = 6 * HOUR_MS;

/**
 * The autumn folds of `tz` within [from, to), as UTC ranges: where the offset drops by k hours at
 * an instant T, the local hours before T come again after it, so [T − k, T + k) holds both of each
 * repeated local hour. For a zone a whole number of hours off UTC (the only ones whose hours are
 * rolled up), T is a whole UTC hour. Ranges are clipped to the window.
 */
export function foldHours(tz: string, from: Date, to: Date): { starts: Date[]; ends: Date[] } {
  const offset = (ms: number) => DateTime.fromMillis(ms, { zone: tz }).offset;
  const out = { starts: [] as Date[], ends: [] as Date[] };
  const start = Math.floor(from.getTime() / HOUR_MS) * HOUR_MS;
  const end = to.getTime();
  for (let a = start; a < end; a += STEP_MS) {
    const b = Math.min(a + STEP_MS, end + HOUR_MS);
    if (offset(b) >= offset(a)) continue;
    // A drop within (a, b]: find the hour it happens at.
    for (let t = a + HOUR_MS; t <= b; t += HOUR_MS) {
      const drop = offset(t - HOUR_MS) - offset(t);
      if (drop <= 0) continue;
      const k = Math.ceil(drop / 60) * HOUR_MS;
      const s = Math.max(t - k, from.getTime());
      const e = Math.min(t + k, end);
      if (s < e) {
        out.starts.push(new Date(s));
        out.ends.push(new Date(e));
      }
    }
  }
  return out;
}
