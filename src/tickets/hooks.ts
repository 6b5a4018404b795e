import type { Ctx } from '../core/context.js';
import type { Ticket } from './models.js';

/**
 * What reacts to a ticket being created or changed, inside the same transaction: the SLA engine
 * (recompute targets on status and priority changes), routing rules. Areas register from the
 * composition root (src/wiring.ts), so the ticket code never imports them. A hook may update the
 * ticket row and then answers true: the caller reads the row again only when one did.
 */
export interface TicketChange {
  /** null on create. */
  before: Ticket | null;
  after: Ticket;
  /** Columns whose value changed (every set column on create). */
  changed: ReadonlySet<string>;
}

/** Answers true when it wrote the ticket row (the caller's copy is then stale). */
export type TicketHook = (ctx: Ctx, change: TicketChange) => Promise<boolean>;

const hooks = new Map<string, TicketHook>();

export function registerTicketHook(name: string, hook: TicketHook): void {
  hooks.set(name, hook);
}

/** Runs every hook; answers whether any wrote the ticket row. */
export async function runTicketHooks(ctx: Ctx, change: TicketChange): Promise<boolean> {
  // An import (ctx.quiet) reproduces history: no SLA clock, routing or snooze reacts to it.
  if (ctx.quiet) return false;
  let wrote = false;
  for (const hook of hooks.values()) if (await hook(ctx, change)) wrote = true;
  return wrote;
}

/** A ticket about to be inserted: its columns, the id already chosen. */
export type NewTicketRow = Record<string, unknown> & { id: string; status_id: string; priority_id: string; type_id: string | null; created_at: Date };

export interface NewTicketColumns {
  columns: Record<string, unknown>;
  /** What must wait until the row exists (events about the ticket). */
  afterInsert?: () => Promise<void>;
}

export type NewTicketColumnsHook = (ctx: Ctx, ticket: NewTicketRow) => Promise<NewTicketColumns>;

const newTicketHooks = new Map<string, NewTicketColumnsHook>();

export function registerNewTicketColumns(name: string, hook: NewTicketColumnsHook): void {
  newTicketHooks.set(name, hook);
}

/** The derived columns of every registered hook, and one function running their after-insert work. */
export async function deriveNewTicketColumns(ctx: Ctx, ticket: NewTicketRow): Promise<{ columns: Record<string, unknown>; afterInsert: () => Promise<void> }> {
  const columns: Record<string, unknown> = {};
  const later: Array<() => Promise<void>> = [];
  // An import (ctx.quiet) reproduces history: no clock starts, as with the lifecycle hooks.
  if (!ctx.quiet) {
    for (const hook of newTicketHooks.values()) {
      const derived = await hook(ctx, ticket);
      Object.assign(columns, derived.columns);
      if (derived.afterInsert) later.push(derived.afterInsert);
    }
  }
  return { columns, afterInsert: async () => { for (const run of later) await run(); } };
}
