import type { Ctx } from '../core/context.js';
import type { Message, Ticket } from '../tickets/models.js';

/**
 * What reacts to a new message inside its transaction: the SLA clock (first and next response),
 * later notifications that need more than the event. Areas register from the composition root
 * (src/wiring.ts), so the conversation never imports them.
 *
 * A hook that changes the ticket row answers the columns instead of writing them: the conversation
 * writes them with the reply's own columns in one UPDATE, so a reply leaves one new version of the
 * row (each version writes an entry in every index of `tickets`, and fires its triggers).
 */
export interface MessageAdded {
  /** The ticket after the message's own effects (first response, reopening), written or not. */
  ticket: Ticket;
  message: Message;
}

/** Ticket columns for the conversation to write, with values as the database takes them. */
export type TicketColumns = Record<string, unknown>;

export type MessageHook = (ctx: Ctx, added: MessageAdded) => Promise<TicketColumns | void>;

const hooks = new Map<string, MessageHook>();

export function registerMessageHook(name: string, hook: MessageHook): void {
  hooks.set(name, hook);
}

/** Runs the hooks in order; answers the ticket columns they derived (a later hook's win). */
export async function runMessageHooks(ctx: Ctx, added: MessageAdded): Promise<TicketColumns> {
  const columns: TicketColumns = {};
  // An import (ctx.quiet) reproduces history: no SLA clock or snooze reacts to it.
  if (ctx.quiet) return columns;
  for (const hook of hooks.values()) Object.assign(columns, await hook(ctx, added));
  return columns;
}

/** What reacts to files added to an existing message (a channel sends them), inside the upload's transaction. */
export type AttachmentsHook = (ctx: Ctx, added: { ticket: Ticket; message: Message }) => Promise<void>;

const attachmentHooks = new Map<string, AttachmentsHook>();

export function registerAttachmentsHook(name: string, hook: AttachmentsHook): void {
  attachmentHooks.set(name, hook);
}

export async function runAttachmentsHooks(ctx: Ctx, added: { ticket: Ticket; message: Message }): Promise<void> {
  if (ctx.quiet) return;
  for (const hook of attachmentHooks.values()) await hook(ctx, added);
}
