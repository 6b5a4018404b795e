import t from 'tap';
import { withinActiveWindow } from '../../../src/push/quiet-hours.js';
import type { Day, NotificationPreferences } from '../../../src/push/schemas.js';

/** Quiet hours are wall-clock time in the user's zone, on both sides of a DST change. */
const prefs = (start: string, end: string, days: Day[]): NotificationPreferences =>
  ({ email: true, push: true, active_window: { start, end, days } });
const weekdays = ['mon', 'tue', 'wed', 'thu', 'fri'] as const;
const at = (iso: string) => new Date(iso);

t.test('Europe/Berlin 09:00–17:00 across the end of summer time (25 Oct 2026)', async (t) => {
  const p = prefs('09:00', '17:00', [...weekdays]);
  // Friday 23 Oct: CEST (UTC+2). 07:30Z = 09:30 local: inside; 06:30Z = 08:30: outside.
  t.equal(withinActiveWindow(p, 'Europe/Berlin', at('2026-10-23T07:30:00Z')), true);
  t.equal(withinActiveWindow(p, 'Europe/Berlin', at('2026-10-23T06:30:00Z')), false);
  t.equal(withinActiveWindow(p, 'Europe/Berlin', at('2026-10-23T14:59:00Z')), true, '16:59 CEST');
  t.equal(withinActiveWindow(p, 'Europe/Berlin', at('2026-10-23T15:00:00Z')), false, '17:00 CEST: the end is exclusive');
  // Monday 26 Oct: CET (UTC+1). The same UTC instants are an hour earlier in local time.
  t.equal(withinActiveWindow(p, 'Europe/Berlin', at('2026-10-26T07:30:00Z')), false, '07:30Z = 08:30 CET');
  t.equal(withinActiveWindow(p, 'Europe/Berlin', at('2026-10-26T07:59:00Z')), false, '08:59 CET: before the window');
  t.equal(withinActiveWindow(p, 'Europe/Berlin', at('2026-10-26T08:00:00Z')), true, '09:00 CET');
  t.equal(withinActiveWindow(p, 'Europe/Berlin', at('2026-10-26T15:30:00Z')), true, '16:30 CET (15:30Z: would be outside in summer)');
  t.equal(withinActiveWindow(p, 'Europe/Berlin', at('2026-10-26T16:00:00Z')), false, '17:00 CET');
  // Sunday 25 Oct itself is not a working day.
  t.equal(withinActiveWindow(p, 'Europe/Berlin', at('2026-10-25T10:00:00Z')), false, 'Sunday');
});

t.test('America/New_York across the start of daylight time (8 Mar 2026)', async (t) => {
  const p = prefs('08:00', '12:00', ['sun', 'mon']);
  // Sunday 8 Mar, clocks jump 02:00 → 03:00 EST→EDT. 12:30Z = 08:30 EDT: inside (it would be 07:30 EST).
  t.equal(withinActiveWindow(p, 'America/New_York', at('2026-03-08T12:30:00Z')), true);
  t.equal(withinActiveWindow(p, 'America/New_York', at('2026-03-01T12:30:00Z')), false, 'a week earlier the same instant is 07:30 EST');
  t.equal(withinActiveWindow(p, 'America/New_York', at('2026-03-01T13:30:00Z')), true, '08:30 EST');
});

t.test('overnight windows belong to the day they start; no window means always', async (t) => {
  const p = prefs('22:00', '06:00', ['fri']);
  t.equal(withinActiveWindow(p, 'UTC', at('2026-11-20T23:00:00Z')), true, 'Friday 23:00');
  t.equal(withinActiveWindow(p, 'UTC', at('2026-11-21T03:00:00Z')), true, 'Saturday 03:00, from Friday night');
  t.equal(withinActiveWindow(p, 'UTC', at('2026-11-21T23:00:00Z')), false, 'Saturday 23:00');
  t.equal(withinActiveWindow(p, 'UTC', at('2026-11-20T03:00:00Z')), false, 'Friday 03:00 belongs to Thursday night');
  t.equal(withinActiveWindow(prefs('00:00', '00:00', ['mon']), 'UTC', at('2026-11-23T13:00:00Z')), true, 'start = end: the whole day');
  t.equal(withinActiveWindow({ email: true, push: true, active_window: null }, 'Asia/Tokyo', at('2026-11-23T13:00:00Z')), true);
  t.equal(withinActiveWindow(prefs('09:00', '17:00', ['mon']), 'Not/AZone', at('2026-11-23T10:00:00Z')), true, 'an unknown zone reads as UTC');
  t.equal(withinActiveWindow(prefs('09:00', '17:00', ['mon']), null, at('2026-11-23T08:00:00Z')), false);
});
