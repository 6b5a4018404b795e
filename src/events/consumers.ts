import type { Ctx } from '../core/context.js';
import type { EventRecord } from './models.js';
import type { CompanionRows } from '../db/companion-rows.js';

/**
 * What fans out from an event, inside the transaction that records it: the webhook outbox, mail
 * notification rows, push. Areas register here from the composition root (src/wiring.ts), so the
 * event store never imports the areas that consume it.
 */
export type EventConsumer = (ctx: Ctx, event: EventRecord, facts: EventFacts) => Promise<void>;

/** What the emitter already holds when it records the event, so a consumer need not read it again. */
export interface EventFacts {
  /** The event's ticket (a `Ticket` row) as it stands in the transaction at that moment. */
  ticket?: object;
  /** Whole `users` rows as they stand in the transaction (a create's requester). */
  users?: readonly object[];
}

/**
 * Rows that go with an event into its own INSERT statement (src/db/companion-rows.ts), such as its
 * webhook deliveries: one statement instead of two. They are computed before the event is stored,
 * from the event's id and type and cached configuration, never from rows of the transaction.
 */
export type EventCompanions = (ctx: Ctx, event: Pick<EventRecord, 'id' | 'type'>) => Promise<CompanionRows | null>;

const consumers = new Map<string, EventConsumer>();
const companions = new Map<string, EventCompanions>();

/** Registers (or replaces, by name) a consumer; idempotent so wiring may run more than once. */
export function registerEventConsumer(name: string, consumer: EventConsumer): void {
  consumers.set(name, consumer);
}

export function eventConsumers(): EventConsumer[] {
  return [...consumers.values()];
}

/** Registers (or replaces, by name) what writes rows with each event. */
export function registerEventCompanions(name: string, companion: EventCompanions): void {
  companions.set(name, companion);
}

export function eventCompanions(): EventCompanions[] {
  return [...companions.values()];
}
