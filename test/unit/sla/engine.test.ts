import t from 'tap';
import fc from 'fast-check';
import { DEFAULT_BUSINESS_HOURS } from '../../../src/sla/calendar.js';
import { runEngine, type EffectivePolicy, type EngineInput, type SlaEvent, type StatusInfo } from '../../../src/sla/engine.js';

const ms = (s: string) => new Date(s).getTime();
const iso = (n: number | null) => (n === null ? null : new Date(n).toISOString());
const S: Record<string, StatusInfo> = {
  new: { key: 'new', category: 'new', pauses_sla: false },
  open: { key: 'open', category: 'open', pauses_sla: false },
  pending: { key: 'pending', category: 'pending', pauses_sla: true },
  resolved: { key: 'resolved', category: 'resolved', pauses_sla: false },
  closed: { key: 'closed', category: 'closed', pauses_sla: false },
};
const P: Record<string, EffectivePolicy> = {
  urgent: { first_response_minutes: 15, next_response_minutes: 30, resolution_minutes: 240, respect_business_hours: false, warn_percent: 80 },
  high: { first_response_minutes: 60, next_response_minutes: 120, resolution_minutes: 480, respect_business_hours: true, warn_percent: 80 },
  normal: { first_response_minutes: 240, next_response_minutes: 480, resolution_minutes: 1440, respect_business_hours: true, warn_percent: 80 },
};
const run = (created: string, policy: EffectivePolicy, events: SlaEvent[], now: string, extra: Partial<EngineInput> = {}) => runEngine({
  created: ms(created), initialStatus: S.new!, openStatus: S.open!, policy, hours: DEFAULT_BUSINESS_HOURS, holidays: [], events, now: ms(now), ...extra,
});
const show = (r: ReturnType<typeof runEngine>) => ({
  paused: r.paused,
  targets: Object.fromEntries(Object.entries(r.targets).map(([k, v]) => [k, {
    due_at: iso(v.due_at), warn_at: iso(v.warn_at), met_at: iso(v.met_at), breached_at: iso(v.breached_at), status: v.status,
  }])),
  timeline: r.timeline.map((e) => `${iso(e.at)} ${e.target} ${e.kind}`),
  next_at: iso(r.next_at),
});

t.test('a fresh ticket: FR and RES active, NR none, next instant is the FR warning', async (t) => {
  const r = show(run('2026-11-23T10:00:00Z', P.high!, [], '2026-11-23T10:00:00Z'));
  t.match(r.targets.first_response, { due_at: '2026-11-23T11:00:00.000Z', warn_at: '2026-11-23T10:48:00.000Z', status: 'active' });
  t.match(r.targets.resolution, { due_at: '2026-11-24T10:00:00.000Z', warn_at: '2026-11-23T16:24:00.000Z', status: 'active' });
  t.same(r.targets.next_response, { due_at: null, warn_at: null, met_at: null, breached_at: null, status: 'none' });
  t.equal(r.next_at, '2026-11-23T10:48:00.000Z');
  t.same(r.timeline, ['2026-11-23T10:00:00.000Z first_response start', '2026-11-23T10:00:00.000Z resolution start']);
});

t.test('created outside hours: the clock starts at opening', async (t) => {
  const r = show(run('2026-11-27T19:00:00Z', P.high!, [], '2026-11-27T19:00:00Z'));
  t.equal(r.targets.first_response!.due_at, '2026-11-30T10:00:00.000Z');
});

t.test('warning then breach then met: the target stays breached and records met_at', async (t) => {
  const r = show(run('2026-11-23T10:00:00Z', P.high!, [{ at: ms('2026-11-23T11:30:00Z'), kind: 'agent_reply' }], '2026-11-23T12:00:00Z'));
  t.same(r.targets.first_response, {
    due_at: '2026-11-23T11:00:00.000Z', warn_at: '2026-11-23T10:48:00.000Z', met_at: '2026-11-23T11:30:00.000Z',
    breached_at: '2026-11-23T11:00:00.000Z', status: 'breached',
  });
  t.same(r.timeline.slice(2), [
    '2026-11-23T10:48:00.000Z first_response warning', '2026-11-23T11:00:00.000Z first_response breach',
    '2026-11-23T11:30:00.000Z first_response met',
  ]);
});

t.test('a reply exactly at the deadline is in time', async (t) => {
  const r = show(run('2026-11-23T10:00:00Z', P.high!, [{ at: ms('2026-11-23T11:00:00Z'), kind: 'agent_reply' }], '2026-11-23T12:00:00Z'));
  t.equal(r.targets.first_response!.status, 'met');
  t.equal(r.targets.first_response!.breached_at, null);
});

t.test('pausing status: due null while paused, remaining time preserved, customer reply resumes to open', async (t) => {
  const events: SlaEvent[] = [
    { at: ms('2026-11-23T10:30:00Z'), kind: 'agent_reply' },
    { at: ms('2026-11-23T11:00:00Z'), kind: 'status', status: S.pending! },
  ];
  const paused = show(run('2026-11-23T10:00:00Z', P.high!, events, '2026-11-24T15:00:00Z'));
  t.equal(paused.paused, true);
  t.same(paused.targets.resolution, { due_at: null, warn_at: null, met_at: null, breached_at: null, status: 'paused' });
  t.equal(paused.next_at, null);
  // 1 h counted before the pause; the customer answers Wed 10:00: 7 h remain → Wed 17:00.
  // The reply also opens a next-response cycle (FR was met): 2 h → Wed 12:00.
  const resumed = show(run('2026-11-23T10:00:00Z', P.high!, [...events, { at: ms('2026-11-25T10:00:00Z'), kind: 'customer_reply' }], '2026-11-25T10:00:00Z'));
  t.equal(resumed.paused, false);
  t.match(resumed.targets.resolution, { due_at: '2026-11-25T17:00:00.000Z', status: 'active' });
  t.match(resumed.targets.next_response, { due_at: '2026-11-25T12:00:00.000Z', status: 'active' });
  t.match(resumed.targets.first_response, { met_at: '2026-11-23T10:30:00.000Z', status: 'met' });
  t.same(resumed.timeline.filter((l) => /pause|resume/.test(l)), [
    '2026-11-23T11:00:00.000Z resolution pause', '2026-11-25T10:00:00.000Z resolution resume',
  ]);
});

t.test('next response: one cycle per customer message while none is open, warnings once per cycle', async (t) => {
  const events: SlaEvent[] = [
    { at: ms('2026-11-23T09:10:00Z'), kind: 'agent_reply' },
    { at: ms('2026-11-23T09:20:00Z'), kind: 'customer_reply' },
    { at: ms('2026-11-23T09:30:00Z'), kind: 'customer_reply' }, // NR already open: no new cycle
    { at: ms('2026-11-23T11:00:00Z'), kind: 'agent_reply' }, // meets NR (due 11:20, warned 10:56)
    { at: ms('2026-11-23T12:00:00Z'), kind: 'customer_reply' }, // second cycle, due 14:00
  ];
  const r = show(run('2026-11-23T09:00:00Z', P.high!, events, '2026-11-23T15:00:00Z'));
  t.same(r.timeline.filter((l) => l.includes('next_response')), [
    '2026-11-23T09:20:00.000Z next_response start', '2026-11-23T10:56:00.000Z next_response warning',
    '2026-11-23T11:00:00.000Z next_response met', '2026-11-23T12:00:00.000Z next_response start',
    '2026-11-23T13:36:00.000Z next_response warning', '2026-11-23T14:00:00.000Z next_response breach',
  ]);
  t.match(r.targets.next_response, { due_at: '2026-11-23T14:00:00.000Z', breached_at: '2026-11-23T14:00:00.000Z', status: 'breached' });
});

t.test('customer replies before the first response open no next-response cycle', async (t) => {
  const r = show(run('2026-11-23T09:00:00Z', P.high!, [{ at: ms('2026-11-23T09:05:00Z'), kind: 'customer_reply' }], '2026-11-23T09:06:00Z'));
  t.equal(r.targets.next_response!.status, 'none');
});

t.test('priority change recomputes unmet targets from their start; a past deadline is a breach at that deadline', async (t) => {
  // normal: FR 240 business minutes from Mon 09:00 → 13:00. At 09:30 it becomes urgent (15 min 24/7): due 09:15, already past.
  const r = show(run('2026-11-23T09:00:00Z', P.normal!, [{ at: ms('2026-11-23T09:30:00Z'), kind: 'priority', policy: P.urgent! }], '2026-11-23T09:30:00Z'));
  t.same(r.targets.first_response, {
    due_at: '2026-11-23T09:15:00.000Z', warn_at: null, met_at: null, breached_at: '2026-11-23T09:15:00.000Z', status: 'breached',
  });
  t.match(r.targets.resolution, { due_at: '2026-11-23T13:00:00.000Z', status: 'active' });
  t.same(r.timeline, [
    '2026-11-23T09:00:00.000Z first_response start', '2026-11-23T09:00:00.000Z resolution start',
    '2026-11-23T09:12:00.000Z first_response warning', '2026-11-23T09:15:00.000Z first_response breach',
  ]);
  // Met targets keep their deadline.
  const m = show(run('2026-11-23T09:00:00Z', P.normal!, [
    { at: ms('2026-11-23T09:05:00Z'), kind: 'agent_reply' }, { at: ms('2026-11-23T09:30:00Z'), kind: 'priority', policy: P.urgent! },
  ], '2026-11-23T09:30:00Z'));
  t.match(m.targets.first_response, { due_at: '2026-11-23T13:00:00.000Z', status: 'met' });
  // Business hours to 24/7 moves a Friday-evening resolution out of the week-end.
  const f = show(run('2026-11-27T16:00:00Z', P.high!, [{ at: ms('2026-11-27T16:30:00Z'), kind: 'priority', policy: P.urgent! }], '2026-11-27T16:30:00Z'));
  t.equal(f.targets.resolution!.due_at, '2026-11-27T20:00:00.000Z');
});

t.test('resolution: met on resolve, resumed on reopen with the time already counted, closed is final', async (t) => {
  const events: SlaEvent[] = [
    { at: ms('2026-11-23T09:30:00Z'), kind: 'agent_reply' },
    { at: ms('2026-11-23T10:00:00Z'), kind: 'status', status: S.resolved! }, // 1 h counted
    { at: ms('2026-11-24T09:00:00Z'), kind: 'customer_reply' }, // reopens to open: 7 h remain → 16:00
  ];
  const r = show(run('2026-11-23T09:00:00Z', P.high!, events, '2026-11-24T09:00:00Z'));
  t.match(r.targets.resolution, { due_at: '2026-11-24T16:00:00.000Z', met_at: null, status: 'active' });
  t.match(r.targets.next_response, { due_at: '2026-11-24T11:00:00.000Z', status: 'active' });
  t.same(r.timeline.filter((l) => l.includes('resolution')), [
    '2026-11-23T09:00:00.000Z resolution start', '2026-11-23T10:00:00.000Z resolution met', '2026-11-24T09:00:00.000Z resolution resume',
  ]);
  const closed = show(run('2026-11-23T09:00:00Z', P.high!, [
    { at: ms('2026-11-23T10:00:00Z'), kind: 'status', status: S.closed! },
    { at: ms('2026-11-23T11:00:00Z'), kind: 'status', status: S.open! },
    { at: ms('2026-11-23T11:00:00Z'), kind: 'customer_reply' },
  ], '2026-11-30T00:00:00Z'));
  t.match(closed.targets, {
    first_response: { status: 'met', met_at: '2026-11-23T10:00:00.000Z' }, resolution: { status: 'met' }, next_response: { status: 'none' },
  });
  t.equal(closed.next_at, null);
});

t.test('a pause spanning a night and a holiday', async (t) => {
  const r = show(run('2026-11-24T15:00:00Z', P.high!, [
    { at: ms('2026-11-24T16:00:00Z'), kind: 'status', status: S.pending! },
    { at: ms('2026-11-27T10:00:00Z'), kind: 'status', status: S.open! },
  ], '2026-11-27T10:00:00Z', { holidays: [{ date: '2026-11-26', recurring: false }] }));
  // FR (60 min) falls due at Tue 16:00, the very instant of the pause: the pause does not save it.
  t.match(r.targets.first_response, { due_at: '2026-11-24T16:00:00.000Z', status: 'breached' });
  // RES 480: 1 h Tue, then Fri 10:00 + 7 h → Fri 17:00.
  t.match(r.targets.resolution, { due_at: '2026-11-27T17:00:00.000Z', status: 'active' });
});

t.test('property: the engine agrees with itself whatever instant it is asked at', async () => {
  // Replaying a history up to `now` and then up to a later instant gives a timeline that extends
  // the earlier one: what the live ticket stored earlier is never contradicted later.
  const kinds = fc.constantFrom('agent_reply', 'customer_reply', 'pending', 'open', 'resolved', 'urgent', 'normal');
  const base = ms('2026-11-20T08:00:00Z');
  fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 6 * 24 * 60 }), kinds), { maxLength: 8 }), fc.integer({ min: 0, max: 8 * 24 * 60 }),
    (steps, cut) => {
      const events: SlaEvent[] = steps.map(([m, k]): SlaEvent => {
        const at = base + m * 60_000;
        if (k === 'agent_reply' || k === 'customer_reply') return { at, kind: k };
        if (k === 'urgent' || k === 'normal') return { at, kind: 'priority', policy: P[k]! };
        return { at, kind: 'status', status: S[k]! };
      }).sort((a, b) => a.at - b.at);
      const input = { created: base, initialStatus: S.new!, openStatus: S.open!, policy: P.high!, hours: DEFAULT_BUSINESS_HOURS, holidays: [], events };
      const early = runEngine({ ...input, now: base + cut * 60_000 });
      const late = runEngine({ ...input, now: base + 10 * 24 * 3600_000 });
      const key = (e: { at: number; target: string; kind: string }) => `${e.at} ${e.target} ${e.kind}`;
      const lateKeys = new Set(late.timeline.map(key));
      return early.timeline.every((e) => lateKeys.has(key(e)));
    }), { numRuns: 200 });
});
