import type { Ctx } from '../core/context.js';
import { prepared } from '../db/prepared.js';

const NEXT_NUMBER_SQL = `INSERT INTO ticket_counters (tenant_id, last_number) VALUES (?, 1)
  ON CONFLICT (tenant_id) DO UPDATE SET last_number = ticket_counters.last_number + 1
  RETURNING last_number`;

/**
 * The next ticket number of ctx's tenant (CONTRACT §1: a sequence per tenant starting at 1).
 *
 * The counter row is advanced in its own short statement on the dedicated `deps.counters` pool,
 * committed at once, not in the create's transaction: a row lock held until the create commits
 * would serialise every create of a tenant behind the slowest one (docs/performance.md measured
 * ~14 creates/s that way). Numbers stay unique and increasing; like a database sequence, a create
 * that fails after it was numbered (validation runs before) leaves its number unused.
 *
 * The pool is separate so that a create holding a connection of the main pool never waits for
 * another one of that pool (which could starve it under load). Imports (ctx.quiet) keep the
 * number in their transaction.
 *
 * The pool commits asynchronously (`synchronous_commit = off`): the row lock is released as soon
 * as the commit record is in the WAL buffers, not after the disk flush, so the tenant's counter
 * is not limited to one number per flush (with 3-7 ms flushes that capped a tenant's creates at
 * 150-300/s, docs/performance.md).
 * Nothing is lost by it: WAL is flushed in order, so the synchronous commit of any ticket that
 * carries a number flushes the counter's earlier commit record with it. A crash can only forget
 * numbers no committed ticket used, which are then handed out again.
 */
export async function nextTicketNumber(ctx: Ctx): Promise<number> {
  const db = ctx.quiet ? ctx.trx : ctx.deps.counters;
  const { rows } = await prepared(db.raw<{ rows: Array<{ last_number: number }> }>(NEXT_NUMBER_SQL, [ctx.tenantId]));
  return rows[0]!.last_number;
}
