import t from 'tap';
import { formatRecurrence, lastEnd, occurrences, parseRecurrence } from '../../../src/meetings/recurrence.js';

/** The spec's RRULE subset and DST-correct expansion in the organizer's zone. */
t.test('the subset is accepted and normalised', async (t) => {
  const ok = (text: string) => {
    const parsed = parseRecurrence(text);
    if ('problem' in parsed) throw new Error(parsed.problem.message);
    return formatRecurrence(parsed.rule);
  };
  t.equal(ok('FREQ=DAILY'), 'FREQ=DAILY');
  t.equal(ok('RRULE:freq=weekly;interval=2;byday=fr,mo;count=10'), 'FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR;COUNT=10');
  t.equal(ok('FREQ=MONTHLY;UNTIL=20270101T000000Z'), 'FREQ=MONTHLY;UNTIL=20270101T000000Z');
  t.equal(ok('FREQ=YEARLY;INTERVAL=1'), 'FREQ=YEARLY');
});

t.test('anything outside the subset is refused', async (t) => {
  for (const text of ['', 'FREQ=HOURLY', 'FREQ=SECONDLY', 'INTERVAL=2', 'FREQ=DAILY;BYDAY=MO', 'FREQ=WEEKLY;BYDAY=SA', 'FREQ=WEEKLY;BYDAY=1MO',
    'FREQ=WEEKLY;BYDAY=MO,MO', 'FREQ=MONTHLY;BYMONTHDAY=1', 'FREQ=DAILY;COUNT=0', 'FREQ=DAILY;COUNT=1001', 'FREQ=DAILY;INTERVAL=0',
    'FREQ=DAILY;COUNT=2;UNTIL=20270101T000000Z', 'FREQ=DAILY;UNTIL=20270101', 'FREQ=DAILY;UNTIL=20271341T000000Z', 'FREQ=DAILY;FREQ=WEEKLY',
    'FREQ=DAILY;WKST=MO', 'FREQ=DAILY;;COUNT=2']) {
    t.ok('problem' in parseRecurrence(text), text);
  }
});

t.test('a weekly series keeps 09:00 local across both DST changes', async (t) => {
  const series = { start_at: new Date('2026-10-19T07:00:00Z'), end_at: new Date('2026-10-19T08:00:00Z'), timezone: 'Europe/Berlin', recurrence_rule: 'FREQ=WEEKLY;BYDAY=MO;COUNT=3' };
  t.same(occurrences(series, new Date('2026-10-01T00:00:00Z'), new Date('2026-12-01T00:00:00Z')).map((o) => [o.start.toISOString(), o.end.toISOString()]), [
    ['2026-10-19T07:00:00.000Z', '2026-10-19T08:00:00.000Z'],
    ['2026-10-26T08:00:00.000Z', '2026-10-26T09:00:00.000Z'],
    ['2026-11-02T08:00:00.000Z', '2026-11-02T09:00:00.000Z'],
  ]);
  t.equal(lastEnd(series)!.toISOString(), '2026-11-02T09:00:00.000Z');
  const ny = { start_at: new Date('2027-03-12T14:00:00Z'), end_at: new Date('2027-03-12T14:30:00Z'), timezone: 'America/New_York', recurrence_rule: 'FREQ=DAILY;INTERVAL=1;COUNT=3' };
  t.same(occurrences(ny, new Date('2027-03-01T00:00:00Z'), new Date('2027-04-01T00:00:00Z')).map((o) => o.start.toISOString()),
    ['2027-03-12T14:00:00.000Z', '2027-03-13T14:00:00.000Z', '2027-03-14T13:00:00.000Z'], '09:00 EST then 09:00 EDT');
});

t.test('windows, unbounded series and UNTIL', async (t) => {
  const open = { start_at: new Date('2026-01-05T09:00:00Z'), end_at: new Date('2026-01-05T10:00:00Z'), timezone: 'UTC', recurrence_rule: 'FREQ=WEEKLY;BYDAY=MO,WE' };
  t.equal(lastEnd(open), null);
  t.same(occurrences(open, new Date('2026-03-02T00:00:00Z'), new Date('2026-03-09T00:00:00Z')).map((o) => o.start.toISOString()),
    ['2026-03-02T09:00:00.000Z', '2026-03-04T09:00:00.000Z']);
  t.same(occurrences(open, new Date('2026-03-02T09:30:00Z'), new Date('2026-03-02T09:45:00Z')).length, 1, 'an occurrence running across the window start counts');
  const until = { ...open, recurrence_rule: 'FREQ=DAILY;UNTIL=20260107T090000Z' };
  t.equal(occurrences(until, new Date('2026-01-01T00:00:00Z'), new Date('2026-02-01T00:00:00Z')).length, 3);
  const single = { ...open, recurrence_rule: null };
  t.same(occurrences(single, new Date('2026-01-05T09:59:00Z'), new Date('2026-01-06T00:00:00Z')).length, 1);
  t.same(occurrences(single, new Date('2026-01-05T10:00:00Z'), new Date('2026-01-06T00:00:00Z')).length, 0, 'touching is not overlapping');
});
