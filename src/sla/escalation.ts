import { SYSTEM_ACTOR, type Deps } from '../core/context.js';
import { inTransaction } from '../db/transaction.js';
import { scoped } from '../db/tenant-scope.js';
import { refreshTicketSla, type SlaState } from './ticket-clock.js';

/**
 * The `sla-escalation` job (every minute; `helpdesk jobs run sla-escalation --now TS`): finds the
 * tickets whose next SLA instant (`sla_next_at`, a warning or a deadline) has come — through the
 * partial index on that column, never a scan of all tickets — and replays each at `now`, which
 * records its `ticket.sla_warning` and breach events (actor null) and moves `sla_next_at` on.
 *
 * Each ticket is claimed in its own tenant transaction with FOR UPDATE SKIP LOCKED and re-checked
 * under the lock: a ticket another daemon (or a ticket write) holds is left to it, and a ticket
 * already handled no longer qualifies. With the announced keys stored in the same row, in the
 * same transaction, no warning or breach is recorded twice, however many daemons run.
 */
const BATCH = 200;
const MAX_BATCHES = 50;

export async function slaEscalation(deps: Deps, now: Date): Promise<Record<string, number>> {
  const totals = { tickets: 0, warnings: 0, breaches: 0, skipped: 0 };
  const seen = new Set<string>();
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const due: Array<{ tenant_id: string; id: string }> = await deps.db('tickets')
      .comment('cross-tenant: the escalation job claims due tickets of every tenant')
      .select('tenant_id', 'id')
      .whereNotNull('sla_next_at').where('sla_next_at', '<=', now)
      .modify((qb) => { if (seen.size) qb.whereNotIn('id', [...seen]); })
      .orderBy('sla_next_at').limit(BATCH);
    if (due.length === 0) break;
    for (const row of due) {
      seen.add(row.id);
      const outcome = await inTransaction(deps, { tenantId: row.tenant_id, actor: SYSTEM_ACTOR, now }, async (ctx) => {
        const claimed = await scoped(ctx, 'tickets').where({ id: row.id }).whereNotNull('sla_next_at').where('sla_next_at', '<=', now)
          .forUpdate().skipLocked().first('sla_state');
        if (!claimed?.sla_state) return null;
        return (await refreshTicketSla(ctx, row.id, claimed.sla_state as SlaState)).announced;
      });
      if (!outcome) {
        totals.skipped += 1;
        continue;
      }
      totals.tickets += 1;
      totals.warnings += outcome.filter((e) => e.kind === 'warning').length;
      totals.breaches += outcome.filter((e) => e.kind === 'breach').length;
    }
  }
  return totals;
}
