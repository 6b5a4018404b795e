import type { Ctx } from '../core/context.js';
import type { Ticket } from './models.js';

/**
 * What reacts to a ticket being created or changed, inside the same transaction: the SLA engine
 * (recompute targets on status and priority changes), routing rules. Areas register from the
 * composition root (src/wiring.ts), so the ticket code never imports them. A hook may update the
 * ticket row; the caller re-reads it after the hooks ran.
 */
export interface TicketChange {
  /** null on create. */
  before: Ticket | null;
  after: Ticket;
  /** Columns whose value changed (every set column on create). */
  changed: ReadonlySet<string>;
  /**
   * A message added by this change (not the one a ticket is created with): public staff and
   * customer replies move the SLA clocks (CONTRACT §11). The conversation code sets it when it
   * runs the hooks after adding a message.
   */
  message?: { is_agent: boolean; is_private: boolean };
}

export type TicketHook = (ctx: Ctx, change: TicketChange) => Promise<void>;

const hooks = new Map<string, TicketHook>();

export function registerTicketHook(name: string, hook: TicketHook): void {
  hooks.set(name, hook);
}

export async function runTicketHooks(ctx: Ctx, change: TicketChange): Promise<void> {
  // An import (ctx.quiet) reproduces history: no SLA clock, routing or snooze reacts to it.
  if (ctx.quiet) return;
  for (const hook of hooks.values()) await hook(ctx, change);
}
