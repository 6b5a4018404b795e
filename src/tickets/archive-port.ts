import type { Ctx } from '../core/context.js';
import type { TicketOut } from './schemas.js';
import type { Message } from '../conversation/schemas.js';

/**
 * The door from the ticket desk to the cold archive (CONTRACT §19): a ticket that is no longer in
 * the hot tables may have been archived; the archiver (wired in src/wiring.ts) reads it back,
 * applying the same visibility as the desk. Null: not archived, or not visible to this actor.
 */
export interface ArchiveReader {
  ticket(ctx: Ctx, id: string): Promise<TicketOut | null>;
  messages(ctx: Ctx, id: string): Promise<Message[] | null>;
}

let reader: ArchiveReader | null = null;

export function registerArchiveReader(r: ArchiveReader): void {
  reader = r;
}

export function archiveReader(): ArchiveReader | null {
  return reader;
}
