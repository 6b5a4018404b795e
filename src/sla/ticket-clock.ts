import type { Ctx } from '../core/context.js';
import { emitSlaEvent, type SlaEventType } from '../events/emit/sla.js';
import { scoped } from '../db/tenant-scope.js';
import { openStatus, statusById, statusList, type StatusRow } from '../vocab/lookup.js';
import type { NewTicketColumns, NewTicketRow, TicketChange } from '../tickets/hooks.js';
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

/**
 * Replays the state at ctx.now, announces the warnings and breaches not yet announced, and answers
 * the ticket columns that hold the outcome, for the caller to write with its own write of the row.
 * With `announce: false` it records nothing: the caller announces `announced` once the ticket row
 * exists (a ticket about to be inserted).
 */
async function evaluateTicketSla(ctx: Ctx, ticketId: string, state: SlaState, options: { announce?: boolean } = {}): Promise<{
  result: EngineResult; announced: TimelineEntry[]; columns: Record<string, unknown>;
}> {
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
  }
  if (options.announce !== false) await announceSla(ctx, ticketId, announced);
  const sla = ticketSla(result);
  const columns = {
    sla: JSON.stringify(sla),
    sla_due_at: sla.resolution.due_at,
    sla_next_at: iso(result.next_at),
    sla_state: JSON.stringify({ ...state, emitted: [...emitted] }),
  };
  return { result, announced, columns };
}

/** Records the warnings and breaches of `entries` as events on the ticket. */
async function announceSla(ctx: Ctx, ticketId: string, entries: TimelineEntry[]): Promise<void> {
  for (const entry of entries) {
    const due = iso(entry.due_at);
    await emitSlaEvent(ctx, entry.kind === 'warning' ? 'ticket.sla_warning' : BREACH_EVENTS[entry.target], { ticketId, target: entry.target, due, at: iso(entry.at) });
  }
}

/** Replays the state at ctx.now, stores the outcome on the ticket and announces what is new. */
export async function refreshTicketSla(ctx: Ctx, ticketId: string, state: SlaState): Promise<{ result: EngineResult; announced: TimelineEntry[] }> {
  const { result, announced, columns } = await evaluateTicketSla(ctx, ticketId, state);
  await scoped(ctx, 'tickets').where({ id: ticketId }).update(columns);
  return { result, announced };
}

/** The state a ticket's clock starts from: the effective policy and the status it is created in. */
async function initialState(ctx: Ctx, ticket: Pick<Ticket, 'status_id' | 'priority_id' | 'type_id'> & { created_at: Date | string }): Promise<SlaState> {
  const status = (await statusById(ctx, ticket.status_id))!;
  return {
    v: 1, created: new Date(ticket.created_at).toISOString(), policy: await effectivePolicy(ctx, ticket.priority_id, ticket.type_id),
    initial_status: info(status), open_status: await resumeStatus(ctx), events: [], emitted: [],
  };
}

const stateOf = (ticket: Ticket) => (ticket as Ticket & { sla_state?: SlaState | null }).sla_state ?? null;

/**
 * The new-ticket columns hook (registered in src/wiring.ts): fixes the effective policy and starts
 * the clocks before the ticket is inserted, so that the INSERT carries the SLA columns and the row
 * is written once. What is due at once is announced after the insert, when the ticket exists.
 */
export async function slaNewTicketColumns(ctx: Ctx, ticket: NewTicketRow): Promise<NewTicketColumns> {
  const { columns, announced } = await evaluateTicketSla(ctx, ticket.id, await initialState(ctx, ticket), { announce: false });
  return { columns, afterInsert: announced.length ? () => announceSla(ctx, ticket.id, announced) : undefined };
}

/**
 * The message hook (registered in src/wiring.ts): a public reply moves the first- and next-response
 * clocks (CONTRACT §11). It answers the SLA columns, which the conversation writes together with
 * the reply's own columns: one new version of the ticket row per reply.
 */
export async function slaMessageColumns(ctx: Ctx, ticket: Ticket, message: { is_agent: boolean; is_private: boolean }): Promise<Record<string, unknown> | undefined> {
  if (message.is_private) return undefined;
  const state = stateOf(ticket) ?? (await initialState(ctx, ticket));
  const events: StoredEvent[] = [...state.events, { at: ctx.now.toISOString(), kind: message.is_agent ? 'agent_reply' : 'customer_reply' }];
  return (await evaluateTicketSla(ctx, ticket.id, { ...state, events })).columns;
}

/**
 * The lifecycle hook (registered in src/wiring.ts): on a change of status or priority appends it
 * to the history. A type change moves nothing (CONTRACT §11). A created ticket's clock started
 * with its insert (`slaNewTicketColumns`).
 */
export async function slaTicketHook(ctx: Ctx, change: TicketChange): Promise<boolean> {
  const ticket = change.after;
  const at = ctx.now.toISOString();
  if (change.before === null) return false;
  const state = stateOf(ticket) ?? (await initialState(ctx, ticket));
  const events = [...state.events];
  if (change.changed.has('status_id')) events.push({ at, kind: 'status', status: info((await statusById(ctx, ticket.status_id))!) });
  if (change.changed.has('priority_id')) events.push({ at, kind: 'priority', policy: await effectivePolicy(ctx, ticket.priority_id, ticket.type_id) });
  if (events.length === state.events.length) return false;
  await refreshTicketSla(ctx, ticket.id, { ...state, events });
  return true;
}
