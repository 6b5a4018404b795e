import type { Ctx } from '../core/context.js';
import { prepared } from '../db/prepared.js';
import { writeBehind } from '../db/write-behind.js';
import { companionInserts, type CompanionRows } from '../db/companion-rows.js';
import { insertStatement } from '../db/insert-statement.js';
import { tenantRow } from '../db/tenant-scope.js';
import { eventCompanions, eventConsumers, type EventFacts } from './consumers.js';
import { EventRecord, type SubjectType } from './models.js';
import { publishAfterCommit } from './publisher.js';

export interface NewEvent {
  /** The webhook event name, e.g. `ticket.status_changed`. */
  type: string;
  subjectType: SubjectType;
  subjectId?: string | null;
  /** Set for every event that belongs on a ticket's timeline. */
  ticketId?: string | null;
  /** The timeline's `from` and `to` (names or values as a person reads them). */
  from?: string | null;
  to?: string | null;
  /** The webhook payload of the spec's event table. */
  data: Record<string, unknown>;
  /** Overrides the context's actor; `null` for the system (SLA escalations). */
  actor?: { id: string | null; name: string | null } | null;
  /** Rows the emitter holds, current in the transaction; handed to the consumers as they are. */
  held?: EventFacts;
  /**
   * Rows of the emitter's own change, written by the event's statement before any consumer runs
   * (a reply's message), for ctx's tenant like every companion row (src/db/companion-rows.ts).
   */
  writes?: CompanionRows[];
}

/**
 * Appends one event in ctx's transaction and hands it to every registered consumer in that same
 * transaction (ARCHITECTURE rule 3): a rolled-back change leaves neither the event nor its
 * deliveries behind. It is committed unnumbered; its `seq` and the NOTIFY come from the tenant's
 * publisher run right after the commit (src/events/publisher.ts).
 */
export async function recordEvent(ctx: Ctx, input: NewEvent): Promise<EventRecord> {
  const row = tenantRow(ctx, eventRow(ctx, input));
  // The rows that go with the event (the emitter's own, its webhook deliveries) are written by the
  // event's statement.
  // An import (ctx.quiet) records history: nothing may fan out to webhooks, mail or push, and it
  // publishes its events itself, once per phase (see Ctx.quiet).
  const companions: CompanionRows[] = [...(input.writes ?? [])];
  for (const companion of ctx.quiet ? [] : eventCompanions()) {
    const rows = await companion(ctx, { id: row.id, type: input.type });
    if (rows) companions.push(rows);
  }
  // Prepared: the text depends only on the number of companion rows, which a tenant's endpoints fix.
  // Held and sent with the transaction's next statement (src/db/write-behind.ts): every column is
  // known here, so nothing is read back, and the rows are written before any later statement runs.
  const insert = insertStatement(ctx.trx, { table: 'events', rows: [row] }, companionInserts(companions, ctx));
  await writeBehind(prepared(insert));
  const event = storedEvent(row);
  if (ctx.quiet) return event;
  publishAfterCommit(ctx);
  for (const consume of eventConsumers()) await consume(ctx, event, input.held ?? {});
  return event;
}

/**
 * Many events in one multi-row INSERT, in ctx's transaction like `recordEvent`. For bulk writers
 * such as the legacy import: ctx is quiet (no consumer, publisher once per phase, see Ctx.quiet),
 * so the rows are not read back.
 */
export async function recordEvents(ctx: Ctx, inputs: NewEvent[]): Promise<void> {
  if (!ctx.quiet) throw new Error('recordEvents is for quiet (import) contexts; use recordEvent');
  if (!inputs.length) return;
  await ctx.trx('events').insert(inputs.map((input) => tenantRow(ctx, eventRow(ctx, input))));
}

/** The event as its row reads back: unnumbered, its data as PostgreSQL's jsonb returns it. */
function storedEvent(row: Record<string, unknown>): EventRecord {
  return EventRecord.fromDatabaseJson({ ...row, seq: null, data: JSON.parse(JSON.stringify(row.data)) });
}

function eventRow(ctx: Ctx, input: NewEvent): Record<string, unknown> {
  const actor = input.actor === undefined ? { id: ctx.actor.userId, name: ctx.actor.name } : input.actor;
  return {
    type: input.type,
    subject_type: input.subjectType,
    subject_id: input.subjectId ?? input.ticketId ?? null,
    ticket_id: input.ticketId ?? null,
    actor_id: actor?.id ?? null,
    actor_name: actor?.name ?? null,
    from_value: input.from ?? null,
    to_value: input.to ?? null,
    data: input.data,
    created_at: ctx.now,
  };
}
