import type { Ctx } from '../core/context.js';
import type { EventRecord } from './models.js';

/**
 * What fans out from an event, inside the transaction that records it: the webhook outbox, mail
 * notification rows, push. Areas register here from the composition root (src/wiring.ts), so the
 * event store never imports the areas that consume it.
 */
export type EventConsumer = (ctx: Ctx, event: EventRecord) => Promise<void>;

const consumers = new Map<string, EventConsumer>();

/** Registers (or replaces, by name) a consumer; idempotent so wiring may run more than once. */
export function registerEventConsumer(name: string, consumer: EventConsumer): void {
  consumers.set(name, consumer);
}

export function eventConsumers(): EventConsumer[] {
  return [...consumers.values()];
}
