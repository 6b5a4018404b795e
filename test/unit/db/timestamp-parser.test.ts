import t from 'tap';
import pg from 'pg';
import { parseTimestamptz } from '../../../src/db/timestamp-parser.js';

/**
 * The hand-written timestamptz parser answers exactly what pg's own parser answers, for every form
 * PostgreSQL sends (fractions of 0 to 6 digits, offsets of hours, minutes and seconds) and for the
 * forms it leaves to pg's parser (infinity, BC dates, early years). The integration test
 * (test/integration/db/timestamps.test.ts) reads the forms from a real server.
 */
// pg's parser as shipped: this file loads src/db/connection.ts, which installs ours, only at its end.
const general = pg.types.getTypeParser(1184, 'text') as (text: string) => unknown;
t.not(general, parseTimestamptz, 'compared with pg\'s own parser');
const same = (text: string) => {
  const ours = parseTimestamptz(text);
  const theirs = general(text);
  return ours instanceof Date && theirs instanceof Date ? ours.getTime() === theirs.getTime() : Object.is(ours, theirs);
};

t.test('agrees with pg on random values of every shape', async (t) => {
  let seed = 42;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const two = (n: number) => String(n).padStart(2, '0');
  const mismatches: string[] = [];
  for (let i = 0; i < 20_000; i++) {
    const year = 1000 + random(9000);
    const base = `${year}-${two(1 + random(12))}-${two(1 + random(28))} ${two(random(24))}:${two(random(60))}:${two(random(60))}`;
    const places = random(7);
    const fraction = places ? '.' + String(random(10 ** places)).padStart(places, '0') : '';
    const hours = `${random(2) ? '+' : '-'}${two(random(15))}`;
    const offset = [hours, `${hours}:${two(random(60))}`, `${hours}:${two(random(60))}:${two(random(60))}`][random(3)]!;
    const text = base + fraction + offset;
    if (!same(text)) mismatches.push(text);
  }
  t.same(mismatches, [], 'no value differs');
});

t.test('the forms it hands to pg, and edge values', async (t) => {
  for (const text of [
    'infinity', '-infinity', '0044-03-15 12:00:00+00 BC', '0099-01-01 00:00:00+00', '0999-12-31 23:59:59.999999+00',
    '2026-11-29 10:36:38+00', '2026-11-29 10:36:38.1+00', '2026-11-29 10:36:38.999999+00', '2026-11-29 10:36:38.000001-09:30',
    '1970-01-01 00:00:00+00', '2000-02-29 23:59:59.5+14', '2026-11-29 10:36:38.123+05:45:30', '2026-11-29 10:36:38.+00',
  ]) {
    t.ok(same(text), text);
  }
  t.equal((parseTimestamptz('2026-11-29 10:36:38.123456+00') as Date).toISOString(), '2026-11-29T10:36:38.123Z');
  t.equal((parseTimestamptz('2026-11-29 10:36:38.9+01:30') as Date).toISOString(), '2026-11-29T09:06:38.900Z');
});

t.test('pg reads timestamptz with it once connection.ts is loaded', async (t) => {
  await import('../../../src/db/connection.js');
  t.equal(pg.types.getTypeParser(1184, 'text'), parseTimestamptz);
});
