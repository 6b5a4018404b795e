import type { Knex } from 'knex';
import type { Ctx } from '../core/context.js';
import { prepared } from '../db/prepared.js';

/**
 * Ticket numbers: CONTRACT §1, "an integer sequence per tenant starting at 1", taken literally.
 * Each tenant has its own PostgreSQL sequence, `ticket_numbers."<tenant id>"`, created and dropped
 * with the tenant (migrations/20261202030000_ticket_number_sequences.ts).
 *
 * A create draws its number inside the statement that inserts the ticket (`drawTicketNumber`), so
 * numbering costs no statement of its own. A sequence takes no row lock and is not rolled back:
 * one tenant's creates never wait for each other's transactions, numbers are unique and increase
 * in the order they are drawn, and a create that fails after drawing leaves its number unused.
 */
export function ticketNumberSequence(tenantId: string): string {
  return `ticket_numbers."${tenantId}"`;
}

/** The tenant's next number, as a value of an INSERT: drawn by the statement that writes the ticket. */
export function drawTicketNumber(ctx: Pick<Ctx, 'trx' | 'tenantId'>): Knex.Raw {
  return ctx.trx.raw('nextval(?::regclass)', [ticketNumberSequence(ctx.tenantId)]);
}

/** The tenant's next number, drawn now (an import's ticket whose own number is taken). */
export async function nextTicketNumber(ctx: Pick<Ctx, 'trx' | 'tenantId'>): Promise<number> {
  const { rows } = await prepared(ctx.trx.raw<{ rows: Array<{ n: string }> }>('SELECT ? AS n', [drawTicketNumber(ctx)]));
  return Number(rows[0]!.n);
}

/**
 * Raises the tenant's sequence so that every number drawn from now on is above `top` (an import
 * keeps its tickets' numbers up to `top`). Exact while creates draw numbers: the database function
 * holds off drawing while it reads and sets the sequence.
 */
export async function reserveTicketNumbersThrough(ctx: Pick<Ctx, 'trx' | 'tenantId'>, top: number): Promise<void> {
  await ctx.trx.raw('SELECT ticket_numbers_reserve_through(?, ?)', [ctx.tenantId, top]);
}
