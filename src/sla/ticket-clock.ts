import type { Ctx } from '../core/context.js';
import { emitSlaEvent, type SlaEventType } from '../events/emit/sla.js';
import { scoped } from '../db/tenant-scope.js';
import { openStatus, statusById, statusList, type StatusRow } from '../vocab/lookup.js';
import type { TicketChange } from '../tickets/hooks.js';
import type { Ticket, TicketSla } from '../tickets/models.js';
import { loadBusinessHours, loadHolidays } from './business-hours.js';
import { runEngine, type EffectivePolicy, type EngineResult, type SlaEvent, type StatusInfo, type TargetName, type TimelineEntry } from './engine.js';
import { effectivePolicy } from './policies.js';

/**
 * The live ticket's SLA clock. A ticket keeps in `sla_state` what the engine needs to replay it —
 * the policy fixed at creation, the status it was created in, and its SLA-relevant history
 * (status and priority changes, public replies) — plus the keys of the warnings and breaches it
 * has already announced. Every write that moves the clock (the ticket lifecycle hook) and every
 * escalation run replays that history at `ctx.now`, stores `sla`, `sla_due_at` (= resolution's
 * due_at) and `sla_next_at` (the next warning or breach instant), and records the warnings and
 * breaches not yet announced: exactly once, because the key set lives in the same row, written
 * in the same transaction that holds the row lock.
 *
 * `helpdesk sla simulate` feeds the same engine, so the two agree to the minute.
 */

type StoredEvent =
  | { at: string; kind: 'agent_reply' | 'customer_reply' }
  | { at: string; kind: 'status'; status: StatusInfo }
  | { at: string; kind: 'priority'; policy: EffectivePolicy };

export interface SlaState {
  v: 1;
  created: string;
  policy: EffectivePolicy;
  initial_status: StatusInfo;
  open_status: StatusInfo;
  events: StoredEvent[];
  /** `target:kind:instant` of every warning and breach already recorded as an event. */
  emitted: string[];
}

const BREACH_EVENTS: Record<TargetName, SlaEventType> = {
  first_response: 'ticket.first_response_breached',
  next_response: 'ticket.next_response_breached',
  resolution: 'ticket.sla_breached',
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const info = (s: StatusRow): StatusInfo => ({ key: s.key, category: s.category, pauses_sla: s.pauses_sla });
const keyOf = (e: TimelineEntry) => `${e.target}:${e.kind}:${e.at}`;

/** Where the clock resumes after a pause: the open status (any status, should a tenant have none). */
async function resumeStatus(ctx: Ctx): Promise<StatusInfo> {
  return info((await openStatus(ctx)) ?? (await statusList(ctx))[0]!);
}

/** What the ticket API shows (CONTRACT §5): no warn_at there. */
function ticketSla(result: EngineResult): TicketSla {
  const target = (name: TargetName) => {
    const t = result.targets[name];
    return { due_at: iso(t.due_at), met_at: iso(t.met_at), breached_at: iso(t.breached_at), status: t.status };
  };
  return { paused: result.paused, first_response: target('first_response'), next_response: target('next_response'), resolution: target('resolution') };
}

/** Replays the state at ctx.now, stores the outcome on the ticket and announces what is new. */
export async function refreshTicketSla(ctx: Ctx, ticketId: string, state: SlaState): Promise<{ result: EngineResult; announced: TimelineEntry[] }> {
  const [hours, holidays] = await Promise.all([loadBusinessHours(ctx), loadHolidays(ctx)]);
  const events = state.events.map((e) => ({ ...e, at: Date.parse(e.at) }) as SlaEvent);
  const result = runEngine({
    created: Date.parse(state.created), initialStatus: state.initial_status, openStatus: state.open_status, policy: state.policy,
    hours: { timezone: hours.timezone, schedule: hours.schedule }, holidays, events, now: ctx.now.getTime(),
  });
  const emitted = new Set(state.emitted);
  const announced: TimelineEntry[] = [];
  for (const entry of result.timeline) {
    if ((entry.kind !== 'warning' && entry.kind !== 'breach') || emitted.has(keyOf(entry))) continue;
    emitted.add(keyOf(entry));
    announced.push(entry);
    const due = iso(entry.due_at);
    await emitSlaEvent(ctx, entry.kind === 'warning' ? 'ticket.sla_warning' : BREACH_EVENTS[entry.target], { ticketId, target: entry.target, due, at: iso(entry.at) });
  }
  const sla = ticketSla(result);
  await scoped(ctx, 'tickets').where({ id: ticketId }).update({
    sla: JSON.stringify(sla),
    sla_due_at: sla.resolution.due_at,
    sla_next_at: iso(result.next_at),
    sla_state: JSON.stringify({ ...state, emitted: [...emitted] }),
  });
  return { result, announced };
}

/**
 * The lifecycle hook (registered in src/wiring.ts): on create, fixes the effective policy and
 * starts the clocks; on a change of status or priority, or a public message, appends it to the
 * history. A type change moves nothing (CONTRACT §11).
 */
export async function slaTicketHook(ctx: Ctx, change: TicketChange): Promise<void> {
  const ticket = change.after;
  const at = ctx.now.toISOString();
  let state = (ticket as Ticket & { sla_state?: SlaState | null }).sla_state ?? null;
  if (change.before === null || state === null) {
    const status = (await statusById(ctx, ticket.status_id))!;
    state = {
      v: 1, created: new Date(ticket.created_at).toISOString(), policy: await effectivePolicy(ctx, ticket.priority_id, ticket.type_id),
      initial_status: info(status), open_status: await resumeStatus(ctx), events: [], emitted: [],
    };
    if (change.before === null) return void (await refreshTicketSla(ctx, ticket.id, state));
  }
  const events = [...state.events];
  if (change.message && !change.message.is_private) events.push({ at, kind: change.message.is_agent ? 'agent_reply' : 'customer_reply' });
  if (change.changed.has('status_id')) events.push({ at, kind: 'status', status: info((await statusById(ctx, ticket.status_id))!) });
  if (change.changed.has('priority_id')) events.push({ at, kind: 'priority', policy: await effectivePolicy(ctx, ticket.priority_id, ticket.type_id) });
  if (events.length === state.events.length) return;
  await refreshTicketSla(ctx, ticket.id, { ...state, events });
}

