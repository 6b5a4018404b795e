import type { Ctx } from '../core/context.js';

/**
 * The next ticket number of ctx's tenant. The counter row is locked until ctx's transaction ends,
 * so concurrent creates of one tenant get distinct, consecutive numbers (CONTRACT §1: a sequence per
 * tenant starting at 1), and a rolled-back create gives its number back.
 */
export async function nextTicketNumber(ctx: Ctx): Promise<number> {
  const { rows } = await ctx.trx.raw<{ rows: Array<{ last_number: number }> }>(
    `INSERT INTO ticket_counters (tenant_id, last_number) VALUES (?, 1)
     ON CONFLICT (tenant_id) DO UPDATE SET last_number = ticket_counters.last_number + 1
     RETURNING last_number`,
    [ctx.tenantId],
  );
  return rows[0]!.last_number;
}
