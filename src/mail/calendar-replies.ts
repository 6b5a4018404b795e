import type { Ctx } from '../core/context.js';

/**
 * A calendar `METHOD:REPLY` part is an RSVP to a meeting invitation (CONTRACT §7), never a
 * ticket. The meetings module registers its handler here from src/wiring.ts; until it exists
 * the reply is acknowledged and dropped.
 */
export type CalendarReplyHandler = (ctx: Ctx, input: { from: string; ics: string }) => Promise<void>;

let handler: CalendarReplyHandler = async () => {};

export function registerCalendarReplyHandler(next: CalendarReplyHandler): void {
  handler = next;
}

export function handleCalendarReply(ctx: Ctx, input: { from: string; ics: string }): Promise<void> {
  return handler(ctx, input);
}
