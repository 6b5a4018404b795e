/**
 * SLA calendar benchmark: due-time computations per second for business-hours policies, the hot
 * path of ticket writes and of the escalation job.
 *
 *   node --import tsx bench/sla.ts            # BENCH_SECONDS=3 by default per scenario
 *
 * Each scenario computes due times from random start instants over two years, with a fresh
 * calendar every 1,000 computations (as a request would build one from the tenant's rows), so the
 * per-day window cache is measured warm and cold in realistic proportion.
 */
import { ALWAYS_OPEN, BusinessCalendar, DEFAULT_BUSINESS_HOURS, dueAtMs, type Calendar, type Interval } from '../src/sla/calendar.js';
import { runEngine } from '../src/sla/engine.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const START = Date.UTC(2026, 0, 1);
const SPAN = 730 * 86_400_000;
const holidays = [
  { date: '2026-01-01', recurring: true }, { date: '2026-12-25', recurring: true }, { date: '2026-12-26', recurring: true },
  { date: '2026-05-01', recurring: true }, { date: '2026-04-03', recurring: false }, { date: '2026-04-06', recurring: false },
];
let seed = 42;
const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);

interface Scenario { name: string; calendar: () => Calendar; minutes: number; pauses?: Interval[] }
const scenarios: Scenario[] = [
  { name: 'business hours UTC, 4 h (normal first response)', calendar: () => new BusinessCalendar(DEFAULT_BUSINESS_HOURS, holidays), minutes: 240 },
  { name: 'business hours New York, 24 h (normal resolution)', calendar: () => new BusinessCalendar({ ...DEFAULT_BUSINESS_HOURS, timezone: 'America/New_York' }, holidays), minutes: 1440 },
  { name: 'business hours Sydney, 48 h (low resolution)', calendar: () => new BusinessCalendar({ ...DEFAULT_BUSINESS_HOURS, timezone: 'Australia/Sydney' }, holidays), minutes: 2880 },
  {
    name: 'business hours Berlin, 24 h with 3 pauses',
    calendar: () => new BusinessCalendar({ ...DEFAULT_BUSINESS_HOURS, timezone: 'Europe/Berlin' }, holidays), minutes: 1440,
    pauses: [0, 1, 2].map((i) => ({ start: i * 2 * 86_400_000, end: i * 2 * 86_400_000 + 5 * 3_600_000 })),
  },
  { name: '24/7, 4 h', calendar: () => ALWAYS_OPEN, minutes: 240 },
];

for (const s of scenarios) {
  let count = 0;
  let calendar = s.calendar();
  const deadline = performance.now() + seconds * 1000;
  while (performance.now() < deadline) {
    for (let i = 0; i < 1000; i++) {
      const start = START + Math.floor(random() * SPAN);
      dueAtMs(start, s.minutes * 60_000, calendar, s.pauses?.map((p) => ({ start: start + p.start, end: start + p.end })));
    }
    count += 1000;
    calendar = s.calendar();
  }
  console.log(`${s.name.padEnd(52)} ${Math.round(count / seconds).toLocaleString('en-US').padStart(10)} due times/s`);
}

// A whole ticket replay (what a ticket write and the escalation job do): 6 events, 3 targets.
{
  const policy = { first_response_minutes: 60, next_response_minutes: 120, resolution_minutes: 480, respect_business_hours: true, warn_percent: 80 };
  const open = { key: 'open', category: 'open' as const, pauses_sla: false };
  const pending = { key: 'pending', category: 'pending' as const, pauses_sla: true };
  let count = 0;
  const deadline = performance.now() + seconds * 1000;
  while (performance.now() < deadline) {
    const created = START + Math.floor(random() * SPAN);
    const h = 3_600_000;
    runEngine({
      created, initialStatus: { key: 'new', category: 'new', pauses_sla: false }, openStatus: open, policy,
      hours: DEFAULT_BUSINESS_HOURS, holidays, now: created + 200 * h,
      events: [
        { at: created + h, kind: 'agent_reply' }, { at: created + 2 * h, kind: 'customer_reply' },
        { at: created + 5 * h, kind: 'agent_reply' }, { at: created + 6 * h, kind: 'status', status: pending },
        { at: created + 30 * h, kind: 'customer_reply' }, { at: created + 31 * h, kind: 'agent_reply' },
      ],
    });
    count++;
  }
  console.log(`${'ticket replay, 6 events, business hours UTC'.padEnd(52)} ${Math.round(count / seconds).toLocaleString('en-US').padStart(10)} replays/s`);
}
