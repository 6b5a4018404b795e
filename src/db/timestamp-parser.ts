import pg from 'pg';

/**
 * `timestamptz` values read as Dates, by hand for the form PostgreSQL sends in its ISO DateStyle
 * (`2026-11-29 10:36:38.123456+00`, the offset `±HH[:MM[:SS]]`), and by pg's own parser for
 * anything else (`infinity`, BC dates, years before 1000). pg's parser runs three regular
 * expressions and several parseInt/parseFloat calls per value; a list page reads about a hundred
 * timestamps, and that parsing was 7 % of the daemon's time on it (docs/performance.md).
 *
 * Exactly as pg's: milliseconds truncated from the fraction (JavaScript dates hold no more).
 */
const TIMESTAMPTZ = 1184;
const general = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (text: string) => Date | number | null;

/** The decimal number in text[from, to), or -1 if any character there is not a digit. */
function digits(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

export function parseTimestamptz(text: string): Date | number | null {
  const fast = fastParse(text);
  return fast ?? general(text);
}

function fastParse(text: string): Date | null {
  if (text.length < 22 || text[4] !== '-' || text[7] !== '-' || text[10] !== ' ' || text[13] !== ':' || text[16] !== ':') return null;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  if (year < 1000 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return null;
  let i = 19;
  let ms = 0;
  if (text[i] === '.') {
    const start = ++i;
    while (i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
    const count = i - start;
    if (count === 0) return null;
    // The first three digits, padded: ".1" is 100 ms, ".123456" is 123 (truncated, as pg's parser).
    ms = digits(text, start, start + Math.min(count, 3)) * (count === 1 ? 100 : count === 2 ? 10 : 1);
  }
  const sign = text[i] === '+' ? 1 : text[i] === '-' ? -1 : 0;
  if (sign === 0) return null;
  // ±HH, ±HH:MM or ±HH:MM:SS, and nothing after it.
  const rest = text.length - i - 1;
  if (rest !== 2 && rest !== 5 && rest !== 8) return null;
  const offsetHours = digits(text, i + 1, i + 3);
  const offsetMinutes = rest >= 5 ? (text[i + 3] === ':' ? digits(text, i + 4, i + 6) : -1) : 0;
  const offsetSeconds = rest === 8 ? (text[i + 6] === ':' ? digits(text, i + 7, i + 9) : -1) : 0;
  if (offsetHours < 0 || offsetMinutes < 0 || offsetSeconds < 0) return null;
  const offsetMs = sign * (offsetHours * 3600 + offsetMinutes * 60 + offsetSeconds) * 1000;
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMs);
}

/** Installs the parser for every pg client of the process (pg's type parsers are global). */
export function useFastTimestampParser(): void {
  pg.types.setTypeParser(TIMESTAMPTZ, parseTimestamptz);
}
