import { DateTime } from 'luxon';
import { DAYS, DEFAULT_PREFERENCES, type NotificationPreferences } from './schemas.js';

/**
 * Quiet hours: is `now` inside the user's active window? The window is wall-clock time in the
 * user's IANA timezone (UTC when unset or unknown), so it follows daylight saving: 09:00 stays
 * 09:00 local on both sides of a change. `end` before `start` runs past midnight and belongs to
 * the day it starts on (fri 22:00–06:00 covers Saturday 03:00). `start` equal to `end` is the
 * whole day. No window: always active.
 */
function minutes(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
}

export function withinActiveWindow(preferences: NotificationPreferences, timezone: string | null, now: Date): boolean {
  const window = preferences.active_window;
  if (!window) return true;
  let local = DateTime.fromJSDate(now, { zone: timezone || 'UTC' });
  if (!local.isValid) local = DateTime.fromJSDate(now, { zone: 'UTC' });
  const today = DAYS[local.weekday - 1]!;
  const yesterday = DAYS[(local.weekday + 5) % 7]!;
  const t = local.hour * 60 + local.minute;
  const start = minutes(window.start);
  const end = minutes(window.end);
  if (start === end) return window.days.includes(today);
  if (start < end) return window.days.includes(today) && t >= start && t < end;
  return (window.days.includes(today) && t >= start) || (window.days.includes(yesterday) && t < end);
}

/** The stored preferences with defaults for anything missing (rows older than the column's default). */
export function preferencesOf(stored: unknown): NotificationPreferences {
  const p = (stored ?? {}) as Partial<NotificationPreferences>;
  return {
    email: typeof p.email === 'boolean' ? p.email : DEFAULT_PREFERENCES.email,
    push: typeof p.push === 'boolean' ? p.push : DEFAULT_PREFERENCES.push,
    // Days once each, in week order, however they were sent.
    active_window: p.active_window ? { ...p.active_window, days: DAYS.filter((d) => p.active_window!.days.includes(d)) } : null,
  };
}
