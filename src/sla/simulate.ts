import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { parseRfc3339 } from '../core/clock.js';
import { isUuid } from '../core/ids.js';
import { Priority, Status, TicketType } from '../vocab/models.js';
import { loadBusinessHours, loadHolidays, parseBusinessHours } from './business-hours.js';
import type { BusinessHours, HolidayDate } from './calendar.js';
import { runEngine, TARGETS, type EngineResult, type SlaEvent, type StatusInfo, type TargetName, type TimelineKind } from './engine.js';
import { effectivePolicy } from './policies.js';
import type { BusinessHoursInput } from './schemas.js';

/**
 * `helpdesk sla simulate` (CONTRACT §11 "Simulation"): the engine the live tickets use, applied
 * to a scenario with the tenant's real statuses, priorities, policies, overrides, business hours
 * and holidays — or with business hours and holidays from files, to try a configuration before
 * applying it. The result is as at the end of the scenario: its last event, or `until` if later.
 */

export const SCENARIO_KINDS = ['agent_reply', 'customer_reply', 'status', 'priority', 'type'] as const;
export interface ScenarioEvent { at: string; kind: (typeof SCENARIO_KINDS)[number]; value?: string }
const MAX_EVENTS = 1000;

export interface SimulateInput {
  priority: string;
  type?: string | null;
  created: string;
  events?: unknown;
  until?: string | null;
  /** Replaces the tenant's business hours: either body shape of PUT /business-hours. */
  businessHours?: unknown;
  /** Replaces the tenant's holidays: `[{date, recurring?}]`. */
  holidays?: unknown;
}

export interface SimulatedTarget { due_at: string | null; warn_at: string | null; met_at: string | null; breached_at: string | null; status: string }
export interface SimulationOut {
  targets: Record<TargetName, SimulatedTarget>;
  timeline: Array<{ at: string; target: TargetName; kind: TimelineKind; due_at: string | null }>;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function instant(field: string, value: unknown): number {
  const date = typeof value === 'string' ? parseRfc3339(value) : null;
  if (!date) throw errors.invalid(field, 'must be an RFC 3339 timestamp, e.g. 2026-11-23T09:00:00Z');
  return date.getTime();
}

/** Reads and checks the events file's content: one problem per bad field, `events.3.value`. */
export function parseScenario(raw: unknown): ScenarioEvent[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw errors.invalid('events', 'must be a JSON array of {at, kind, value?}');
  if (raw.length > MAX_EVENTS) throw errors.invalid('events', `must hold at most ${MAX_EVENTS} events`);
  const problems: FieldProblem[] = [];
  raw.forEach((e: unknown, i) => {
    const field = `events.${i}`;
    if (typeof e !== 'object' || e === null || Array.isArray(e)) return problems.push({ field, message: 'must be an object {at, kind, value?}' });
    const { at, kind, value, ...rest } = e as Record<string, unknown>;
    for (const key of Object.keys(rest)) problems.push({ field: `${field}.${key}`, message: 'is not allowed' });
    if (typeof at !== 'string' || !parseRfc3339(at)) problems.push({ field: `${field}.at`, message: 'must be an RFC 3339 timestamp' });
    if (!SCENARIO_KINDS.includes(kind as ScenarioEvent['kind'])) problems.push({ field: `${field}.kind`, message: `must be one of ${SCENARIO_KINDS.join(', ')}` });
    const needsValue = kind === 'status' || kind === 'priority' || kind === 'type';
    if (needsValue && (typeof value !== 'string' || value.length === 0 || value.length > 200)) problems.push({ field: `${field}.value`, message: 'must name a key' });
    if (!needsValue && value !== undefined) problems.push({ field: `${field}.value`, message: `is not allowed for ${String(kind)}` });
    return undefined;
  });
  if (problems.length > 0) throw errors.validation(problems);
  return raw as ScenarioEvent[];
}

function parseHours(raw: unknown): BusinessHours {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || typeof (raw as { timezone?: unknown }).timezone !== 'string') {
    throw errors.invalid('business_hours', 'must be an object {timezone, schedule: {monday: {open, close}, …}} or {timezone, monday: …}');
  }
  const { hours, problems } = parseBusinessHours(raw as BusinessHoursInput);
  if (problems.length > 0) throw errors.validation(problems.map((p) => ({ ...p, field: `business_hours.${p.field}` })));
  return hours;
}

function parseHolidays(raw: unknown): HolidayDate[] {
  if (!Array.isArray(raw) || raw.length > 1000) throw errors.invalid('holidays', 'must be a JSON array of at most 1000 {date, recurring?}');
  return raw.map((h: unknown, i) => {
    const { date, recurring } = (typeof h === 'object' && h !== null ? h : {}) as Record<string, unknown>;
    if (typeof date !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(Date.parse(`${date}T00:00:00Z`))) {
      throw errors.invalid(`holidays.${i}.date`, 'must be a date YYYY-MM-DD');
    }
    if (recurring !== undefined && typeof recurring !== 'boolean') throw errors.invalid(`holidays.${i}.recurring`, 'must be a boolean');
    return { date, recurring: recurring === true };
  });
}

async function typeByNameOrId(ctx: Ctx, field: string, value: string): Promise<TicketType> {
  const type = isUuid(value)
    ? await TicketType.findIn(ctx, value)
    : await TicketType.scoped(ctx).whereRaw('lower(name) = lower(?)', [value]).first();
  if (!type) throw errors.invalid(field, `names no ticket type (${value})`);
  return type;
}

export async function simulate(ctx: Ctx, input: SimulateInput): Promise<SimulationOut> {
  const created = instant('created', input.created);
  const scenario = parseScenario(input.events);
  const until = input.until ? instant('until', input.until) : null;

  const statuses = await Status.scoped(ctx).orderBy([{ column: 'position' }, { column: 'id' }]);
  const priorities = await Priority.scoped(ctx);
  const status = (key: string) => statuses.find((s) => s.key === key);
  const info = (s: Status): StatusInfo => ({ key: s.key, category: s.category, pauses_sla: s.pauses_sla });
  const initial = statuses.find((s) => s.category === 'new') ?? statuses[0];
  const open = status('open') ?? statuses.find((s) => s.category === 'open');
  if (!initial || !open) throw errors.conflict('The tenant has no status of category new and open');

  const priority = priorities.find((p) => p.key === input.priority);
  if (!priority) throw errors.invalid('priority', `must be one of ${priorities.map((p) => p.key).join(', ')}`);
  const initialType = input.type ? (await typeByNameOrId(ctx, 'type', input.type)).id : null;
  let typeId = initialType;

  // Resolve keys to what the engine needs, in scenario order (a type change moves nothing now,
  // but a later priority change takes the override of the type the ticket then has).
  const ordered = scenario.map((e, i) => ({ e, i, at: instant(`events.${i}.at`, e.at) })).sort((a, b) => a.at - b.at || a.i - b.i);
  const events: SlaEvent[] = [];
  for (const { e, i, at } of ordered) {
    if (at < created) throw errors.invalid(`events.${i}.at`, 'is before the ticket is created');
    if (e.kind === 'agent_reply' || e.kind === 'customer_reply') events.push({ at, kind: e.kind });
    else if (e.kind === 'status') {
      const s = status(e.value!);
      if (!s) throw errors.invalid(`events.${i}.value`, `must be one of ${statuses.map((x) => x.key).join(', ')}`);
      events.push({ at, kind: 'status', status: info(s) });
    } else if (e.kind === 'priority') {
      const p = priorities.find((x) => x.key === e.value);
      if (!p) throw errors.invalid(`events.${i}.value`, `must be one of ${priorities.map((x) => x.key).join(', ')}`);
      events.push({ at, kind: 'priority', policy: await effectivePolicy(ctx, p.id, typeId) });
    } else {
      typeId = (await typeByNameOrId(ctx, `events.${i}.value`, e.value!)).id;
    }
  }

  const hours = input.businessHours !== undefined && input.businessHours !== null ? parseHours(input.businessHours) : await loadBusinessHours(ctx);
  const holidays = input.holidays !== undefined && input.holidays !== null ? parseHolidays(input.holidays) : await loadHolidays(ctx);
  const end = Math.max(created, ...ordered.map((o) => o.at), until ?? created);
  const result = runEngine({
    created, initialStatus: info(initial), openStatus: info(open), policy: await effectivePolicy(ctx, priority.id, initialType),
    hours: { timezone: hours.timezone, schedule: hours.schedule }, holidays, events, now: end,
  });
  return simulationOut(result);
}

export function simulationOut(result: EngineResult): SimulationOut {
  const targets = Object.fromEntries(TARGETS.map((name) => {
    const t = result.targets[name];
    return [name, { due_at: iso(t.due_at), warn_at: iso(t.warn_at), met_at: iso(t.met_at), breached_at: iso(t.breached_at), status: t.status }];
  })) as Record<TargetName, SimulatedTarget>;
  return { targets, timeline: result.timeline.map((e) => ({ at: iso(e.at)!, target: e.target, kind: e.kind, due_at: iso(e.due_at) })) };
}
