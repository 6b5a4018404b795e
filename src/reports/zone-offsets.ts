import { IANAZone } from 'luxon';

/**
 * A report zone's UTC offsets over a window. Offsets are sampled at both ends and every 12 hours
 * between: an offset lasts months, and no zone changes twice within 12 hours.
 */
const STEP_MS = 12 * 3_600_000;

/**
 * Whether `tz` is a whole number of hours off UTC all through [from, to) (offsets sampled at both
 * ends and every 12 hours between; an offset lasts months): then every UTC hour lies inside one
 * local hour, and hourly rollups re-bucket exactly. Zones with half- or quarter-hour offsets (India,
 * Nepal, Adelaide, Lord Howe's half-hour DST) are answered live.
 */
export function wholeHourZone(tz: string, from: Date, to: Date): boolean {
  const zone = new IANAZone(tz);
  for (let t = from.getTime(); ; t = Math.min(t + STEP_MS, to.getTime())) {
    if (zone.offset(t) % 60 !== 0) return false;
    if (t >= to.getTime()) return true;
  }
}

/** An offset change: its first instant with the new offset, and by how many minutes it moves. */
export interface OffsetShift {
  at: Date;
  minutes: number;
}

/**
 * The offset changes of `tz` in (from, to), each to the millisecond: the first instant with the
 * new offset, found by bisection between two samples that differ.
 */
export function offsetShifts(tz: string, from: Date, to: Date): OffsetShift[] {
  const zone = new IANAZone(tz);
  const shifts: OffsetShift[] = [];
  let before = from.getTime();
  while (before < to.getTime()) {
    const after = Math.min(before + STEP_MS, to.getTime());
    if (zone.offset(after) !== zone.offset(before)) {
      let lo = before;
      let hi = after;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (zone.offset(mid) === zone.offset(before)) lo = mid;
        else hi = mid;
      }
      if (hi < to.getTime()) shifts.push({ at: new Date(hi), minutes: zone.offset(hi) - zone.offset(before) });
    }
    before = after;
  }
  return shifts;
}

export const offsetChanges = (tz: string, from: Date, to: Date): Date[] => offsetShifts(tz, from, to).map((s) => s.at);

/**
 * Whether every local day of `tz` in [from, to) starts on a whole UTC hour and lasts at most 26
 * hours (the clocks go back by two hours at most), as the hourly reply rollups need.
 */
export const dayHoursFit = (tz: string, from: Date, to: Date): boolean =>
  wholeHourZone(tz, from, to) && offsetShifts(tz, from, to).every((s) => s.minutes >= -120);
