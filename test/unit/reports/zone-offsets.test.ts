import t from 'tap';
import { dayHoursFit, offsetShifts, wholeHourZone } from '../../../src/reports/zone-offsets.js';

/**
 * The offset changes a report's zone makes inside its window, which split tickets for the reply
 * rollups (docs/reports.md "Distinct tickets by day, hour and weekday"), found to the millisecond.
 */
const year = [new Date('2026-01-01T00:00:00Z'), new Date('2027-01-01T00:00:00Z')] as const;
const shifts = (tz: string, from: Date, to: Date) => offsetShifts(tz, from, to).map((s) => [s.at.toISOString(), s.minutes]);

t.same(shifts('Europe/Berlin', ...year), [['2026-03-29T01:00:00.000Z', 60], ['2026-10-25T01:00:00.000Z', -60]],
  'Berlin: forward at 01:00 UTC on the last Sunday of March, back on the last Sunday of October');
t.same(shifts('America/New_York', ...year), [['2026-03-08T07:00:00.000Z', 60], ['2026-11-01T06:00:00.000Z', -60]],
  'New York: 02:00 local on the second Sunday of March and the first of November');
t.same(shifts('Antarctica/Troll', ...year), [['2026-03-29T01:00:00.000Z', 120], ['2026-10-25T01:00:00.000Z', -120]], 'Troll moves two hours');
t.same(shifts('UTC', ...year), [], 'UTC never changes');
t.same(shifts('Asia/Kolkata', ...year), [], 'nor does India');
t.same(shifts('Europe/Berlin', new Date('2026-10-25T01:00:00.000Z'), new Date('2026-10-26T00:00:00Z')), [],
  'a change at the window\'s start is not inside it');
t.same(shifts('Europe/Berlin', new Date('2026-10-24T00:00:00Z'), new Date('2026-10-25T01:00:00.000Z')), [],
  'nor one at its end');
t.same(shifts('Europe/Berlin', new Date('2026-10-25T00:59:59.999Z'), new Date('2026-10-25T01:00:00.001Z')), [['2026-10-25T01:00:00.000Z', -60]],
  'found to the millisecond');

t.ok(dayHoursFit('Europe/Berlin', ...year), 'Berlin: days of 23 to 25 whole hours');
t.ok(dayHoursFit('Antarctica/Troll', ...year), 'Troll: a 26-hour day still fits');
t.notOk(dayHoursFit('Asia/Kolkata', ...year), 'half an hour off UTC: days do not start on a UTC hour');
t.notOk(wholeHourZone('Australia/Lord_Howe', ...year), 'Lord Howe moves half an hour');
t.ok(wholeHourZone('America/New_York', ...year));
