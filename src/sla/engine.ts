import { calendarFor, dueAtMs, type BusinessHours, type Calendar, type HolidayDate, type Interval } from './calendar.js';

/**
 * The SLA target engine (CONTRACT §11): from a policy, a calendar and the ticket's history of
 * SLA-relevant events, the three targets as of `now` and the timeline of every start, pause,
 * resume, warning, breach and met. Pure: the live ticket, the escalation job and
 * `helpdesk sla simulate` all replay the same history through this one function, which is what
 * makes them agree to the minute.
 *
 * Decisions beyond the contract's text (docs/sla.md explains them):
 * - An event at exactly a `due_at` comes before the breach: a reply at the deadline is in time.
 * - Entering a `resolved`/`closed` status meets an open first- or next-response target too
 *   (there is nothing left to answer); reopening resumes only the resolution target.
 * - A breach is final: a later priority change that moves the deadline out does not undo it.
 * - While a target is paused its `due_at` and `warn_at` are null; a breached target keeps the
 *   deadline it missed as `due_at`.
 */

export type TargetName = 'first_response' | 'next_response' | 'resolution';
export const TARGETS: readonly TargetName[] = ['first_response', 'next_response', 'resolution'];
export type TargetStatus = 'active' | 'paused' | 'met' | 'breached' | 'none';

/** The effective policy of a ticket: the priority's policy with the type override applied. */
export interface EffectivePolicy {
  first_response_minutes: number;
  next_response_minutes: number;
  resolution_minutes: number;
  respect_business_hours: boolean;
  warn_percent: number;
}

export interface StatusInfo {
  key: string;
  category: 'new' | 'open' | 'pending' | 'resolved' | 'closed';
  pauses_sla: boolean;
}

export type SlaEvent =
  | { at: number; kind: 'agent_reply' }
  | { at: number; kind: 'customer_reply' }
  | { at: number; kind: 'status'; status: StatusInfo }
  | { at: number; kind: 'priority'; policy: EffectivePolicy };

export interface EngineInput {
  created: number;
  /** The status the ticket is created in (normally category `new`). */
  initialStatus: StatusInfo;
  /** Where a customer reply moves a ticket that sits in a pausing or resolved status. */
  openStatus: StatusInfo;
  policy: EffectivePolicy;
  hours: BusinessHours;
  holidays: readonly HolidayDate[];
  /** In order of `at`; events after `now` are ignored. */
  events: readonly SlaEvent[];
  now: number;
}

export interface TargetState {
  due_at: number | null;
  warn_at: number | null;
  met_at: number | null;
  breached_at: number | null;
  status: TargetStatus;
}

export type TimelineKind = 'start' | 'pause' | 'resume' | 'warning' | 'breach' | 'met';

export interface TimelineEntry {
  at: number;
  target: TargetName;
  kind: TimelineKind;
  /** The deadline concerned: the impending one for a warning, the missed one for a breach. */
  due_at: number | null;
}

export interface EngineResult {
  paused: boolean;
  targets: Record<TargetName, TargetState>;
  timeline: TimelineEntry[];
  /**
   * The next instant after `now` at which something happens on its own (a warning or a breach),
   * or null: what the escalation job waits for.
   */
  next_at: number | null;
}

const MINUTE = 60_000;

/** One cycle of one target: FR and RES have one each, NR one per customer message that opens it. */
interface Cycle {
  target: TargetName;
  start: number;
  /** Pauses belonging to this cycle only (the resolution target's resolved spells). */
  ownPauses: Interval[];
  policy: EffectivePolicy;
  met_at: number | null;
  /** When met: the deadline at that moment, kept as the historical `due_at`. */
  metDue: number | null;
  metWarn: number | null;
  breached_at: number | null;
  warned: boolean;
}

function minutesOf(policy: EffectivePolicy, target: TargetName): number {
  if (target === 'first_response') return policy.first_response_minutes;
  if (target === 'next_response') return policy.next_response_minutes;
  return policy.resolution_minutes;
}

export function runEngine(input: EngineInput): EngineResult {
  const calendars = new Map<boolean, Calendar>();
  const calendar = (p: EffectivePolicy) => {
    let c = calendars.get(p.respect_business_hours);
    if (!c) calendars.set(p.respect_business_hours, (c = calendarFor(p.respect_business_hours, input.hours, input.holidays)));
    return c;
  };

  const timeline: TimelineEntry[] = [];
  const statusPauses: Interval[] = [];
  let status = input.initialStatus;
  let pausedSince: number | null = null;
  let policy = input.policy;

  const newCycle = (target: TargetName, at: number): Cycle => ({
    target, start: at, ownPauses: [], policy, met_at: null, metDue: null, metWarn: null, breached_at: null, warned: false,
  });
  const fr = newCycle('first_response', input.created);
  const res = newCycle('resolution', input.created);
  let nr: Cycle | null = null;
  /** The resolution target's current resolved spell, while the ticket sits resolved. */
  let resolvedSince: number | null = null;

  const pausesOf = (c: Cycle): Interval[] => {
    const all = [...statusPauses, ...c.ownPauses];
    if (pausedSince !== null) all.push({ start: pausedSince, end: Infinity });
    return all;
  };
  /** Deadline and warning instant of an unmet cycle under the pauses known so far. */
  const deadlines = (c: Cycle): { due: number | null; warn: number | null } => {
    const minutes = minutesOf(c.policy, c.target);
    const cal = calendar(c.policy);
    const pauses = pausesOf(c);
    const due = dueAtMs(c.start, minutes * MINUTE, cal, pauses);
    const warn = dueAtMs(c.start, Math.round((minutes * MINUTE * c.policy.warn_percent) / 100), cal, pauses);
    return { due, warn };
  };
  const open = (): Cycle[] => [fr, nr, res].filter((c): c is Cycle => c !== null && c.met_at === null);

  const log = (at: number, c: Cycle, kind: TimelineKind, due: number | null = null) => timeline.push({ at, target: c.target, kind, due_at: due });

  /** Lets the clock run up to `to`: warnings and breaches whose instant is before (or at, when inclusive) `to`. */
  const advance = (to: number, inclusive: boolean) => {
    const reached = (t: number | null): t is number => t !== null && (inclusive ? t <= to : t < to);
    for (const c of open()) {
      const { due, warn } = deadlines(c);
      if (!c.warned && c.breached_at === null && reached(warn) && warn !== due) {
        c.warned = true;
        log(warn, c, 'warning', due);
      }
      if (c.breached_at === null && reached(due)) {
        c.breached_at = due;
        c.warned = true; // a warning after its own breach would be noise
        log(due, c, 'breach', due);
      }
    }
  };

  const meet = (c: Cycle, at: number) => {
    const { due, warn } = deadlines(c);
    c.met_at = at;
    c.metDue = c.breached_at ?? due;
    c.metWarn = warn;
    log(at, c, 'met', c.metDue);
  };

  const setStatus = (at: number, next: StatusInfo) => {
    if (status.category === 'closed') return; // closed is final
    const wasDone = status.category === 'resolved';
    const isDone = next.category === 'resolved' || next.category === 'closed';
    const wasPaused = pausedSince !== null;
    const willPause = next.pauses_sla && !isDone;

    if (wasPaused && !willPause) {
      statusPauses.push({ start: pausedSince!, end: at });
      pausedSince = null;
      for (const c of open()) log(at, c, 'resume');
    }
    if (isDone && !wasDone) {
      for (const c of open()) meet(c, at);
      resolvedSince = at;
    } else if (wasDone && !isDone) {
      // Reopened: the resolution target resumes with the time already counted.
      res.ownPauses.push({ start: resolvedSince!, end: at });
      resolvedSince = null;
      res.met_at = null;
      res.metDue = null;
      res.metWarn = null;
      log(at, res, 'resume');
    }
    if (!wasPaused && willPause) {
      pausedSince = at;
      for (const c of open()) log(at, c, 'pause');
    }
    status = next;
  };

  log(input.created, fr, 'start');
  log(input.created, res, 'start');
  if (input.initialStatus.pauses_sla && input.initialStatus.category !== 'resolved' && input.initialStatus.category !== 'closed') {
    pausedSince = input.created;
    for (const c of open()) log(input.created, c, 'pause');
  }

  for (const e of input.events) {
    if (e.at > input.now) break;
    if (e.at < input.created) continue;
    advance(e.at, false);
    switch (e.kind) {
      case 'agent_reply':
        if (status.category === 'closed') break;
        if (fr.met_at === null) meet(fr, e.at);
        else if (nr && nr.met_at === null) meet(nr, e.at);
        break;
      case 'customer_reply':
        if (status.category === 'closed') break;
        if (status.pauses_sla || status.category === 'resolved') setStatus(e.at, input.openStatus);
        if (fr.met_at !== null && (nr === null || nr.met_at !== null)) {
          nr = newCycle('next_response', e.at);
          log(e.at, nr, 'start');
          if (pausedSince !== null) log(e.at, nr, 'pause');
        }
        break;
      case 'status':
        setStatus(e.at, e.status);
        break;
      case 'priority':
        // Every unmet target is recomputed from its original start under the new policy; a
        // deadline that lands in the past is a breach at that deadline, found by the next advance.
        policy = e.policy;
        for (const c of open()) c.policy = e.policy;
        advance(e.at, true);
        break;
    }
  }
  advance(input.now, true);

  const state = (c: Cycle | null): TargetState => {
    if (c === null) return { due_at: null, warn_at: null, met_at: null, breached_at: null, status: 'none' };
    if (c.met_at !== null) {
      return { due_at: c.metDue, warn_at: c.metWarn, met_at: c.met_at, breached_at: c.breached_at, status: c.breached_at !== null ? 'breached' : 'met' };
    }
    if (c.breached_at !== null) return { due_at: c.breached_at, warn_at: null, met_at: null, breached_at: c.breached_at, status: 'breached' };
    const { due, warn } = deadlines(c);
    const paused = due === null && pausedSince !== null;
    return { due_at: due, warn_at: warn, met_at: null, breached_at: null, status: paused ? 'paused' : 'active' };
  };

  let next: number | null = null;
  for (const c of open()) {
    if (c.breached_at !== null) continue;
    const { due, warn } = deadlines(c);
    for (const t of [c.warned ? null : warn, due]) if (t !== null && t > input.now && (next === null || t < next)) next = t;
  }

  // Stable sort: a breach found late (after a priority change) still lands at its instant.
  timeline.sort((a, b) => a.at - b.at);
  return {
    paused: pausedSince !== null,
    targets: { first_response: state(fr), next_response: state(nr), resolution: state(res) },
    timeline,
    next_at: next,
  };
}
