import type { Ctx } from '../core/context.js';
import type { Message, Ticket } from '../tickets/models.js';

/**
 * What reacts to a new message inside its transaction: the SLA clock (first and next response),
 * later notifications that need more than the event. Areas register from the composition root
 * (src/wiring.ts), so the conversation never imports them.
 */
export interface MessageAdded {
  /** The ticket after the message's own effects (first response, reopening). */
  ticket: Ticket;
  message: Message;
}

export type MessageHook = (ctx: Ctx, added: MessageAdded) => Promise<void>;

const hooks = new Map<string, MessageHook>();

export function registerMessageHook(name: string, hook: MessageHook): void {
  hooks.set(name, hook);
}

export async function runMessageHooks(ctx: Ctx, added: MessageAdded): Promise<void> {
  // An import (ctx.quiet) reproduces history: no SLA clock or snooze reacts to it.
  if (ctx.quiet) return;
  for (const hook of hooks.values()) await hook(ctx, added);
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
