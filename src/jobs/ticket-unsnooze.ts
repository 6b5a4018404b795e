import { SYSTEM_ACTOR, type Deps } from '../core/context.js';
import { inTransaction } from '../db/transaction.js';
import { listTenants } from '../tenants/service.js';
import { unsnoozeDue } from '../tickets/snooze.js';

/**
 * The `ticket-unsnooze` job: ends every snooze whose time has come, tenant by tenant (one
 * transaction each), recording `ticket.unsnoozed` with no actor. Idempotent: a ticket whose
 * snooze was already ended is not due any more.
 */
export async function ticketUnsnooze(deps: Deps, now: Date): Promise<Record<string, number>> {
  const totals = { tenants: 0, unsnoozed: 0 };
  for (const tenant of await listTenants(deps.db)) {
    totals.unsnoozed += await inTransaction(deps, { tenantId: tenant.id, actor: SYSTEM_ACTOR, now }, (ctx) => unsnoozeDue(ctx));
    totals.tenants += 1;
  }
  return totals;
}
