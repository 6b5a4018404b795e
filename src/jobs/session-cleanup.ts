import { SYSTEM_ACTOR, type Deps } from '../core/context.js';
import { inTransaction } from '../db/transaction.js';
import { listTenants } from '../tenants/service.js';
import { purgeExpiredCredentials } from '../auth/cleanup.js';

/**
 * The `session-cleanup` job: purges expired credentials tenant by tenant, one transaction per
 * tenant (a failure in one tenant leaves the others' work committed), and returns the totals by
 * kind plus the number of tenants visited.
 */
export async function sessionCleanup(deps: Deps, now: Date): Promise<Record<string, number>> {
  const totals: Record<string, number> = { tenants: 0 };
  for (const tenant of await listTenants(deps.db)) {
    const counts = await inTransaction(deps, { tenantId: tenant.id, actor: SYSTEM_ACTOR, now }, (ctx) => purgeExpiredCredentials(ctx));
    for (const [kind, count] of Object.entries(counts)) totals[kind] = (totals[kind] ?? 0) + count;
    totals.tenants! += 1;
  }
  return totals;
}
