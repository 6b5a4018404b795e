import t from 'tap';
import { toRfc3339 } from '../../../src/core/clock.js';

t.test('toRfc3339 writes exactly what Date.prototype.toISOString writes', async (t) => {
  const edges = [
    0, 1, -1, Date.UTC(1000, 0, 1), Date.UTC(1000, 0, 1) - 1, Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 1,
    Date.UTC(2024, 1, 29, 9, 5, 7, 3), Date.UTC(2026, 11, 2, 10, 0, 0, 10), Date.UTC(2026, 11, 2, 10, 0, 0, 100), Date.UTC(-50, 5, 5), 8.64e15, -8.64e15,
  ];
  const random = Array.from({ length: 20_000 }, () => Math.floor((Math.random() * 2 - 1) * 8.64e15));
  const recent = Array.from({ length: 20_000 }, () => Date.UTC(2000, 0, 1) + Math.floor(Math.random() * 40 * 365.25 * 86_400_000));
  let wrong = 0;
  for (const ms of [...edges, ...random, ...recent]) {
    const date = new Date(ms);
    if (toRfc3339(date) !== date.toISOString()) {
      if (wrong++ < 5) t.fail(`${ms}: ${toRfc3339(date)} instead of ${date.toISOString()}`);
    }
  }
  t.equal(wrong, 0, 'every instant from year -271821 to 275760, and 20,000 of this era');
  t.equal(toRfc3339(new Date(Date.UTC(2026, 0, 5, 3, 4, 5, 6))), '2026-01-05T03:04:05.006Z', 'zero-padded fields');
});

t.test('toRfc3339 reads strings, passes null through and refuses an invalid date', async (t) => {
  t.equal(toRfc3339('2026-12-02T11:30:00+01:00'), '2026-12-02T10:30:00.000Z');
  t.equal(toRfc3339(null), null);
  t.equal(toRfc3339(undefined), null);
  t.throws(() => toRfc3339(new Date(NaN)), RangeError);
  t.throws(() => toRfc3339('not a time'), RangeError);
});
