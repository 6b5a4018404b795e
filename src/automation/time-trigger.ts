import { SYSTEM_ACTOR, type Deps } from '../core/context.js';
import { inTransaction } from '../db/transaction.js';
import { listTenants } from '../tenants/service.js';
import { Ticket } from '../tickets/models.js';
import { RoutingRuleRecord } from './models.js';
import { routeTicket } from './routing.js';

/**
 * The `routing-time-trigger` job: rules with the `time_trigger` occasion run again over the
 * tickets still waiting for someone: unassigned, not snoozed, in a status of category new or open,
 * oldest first. It is how a ticket that found no available agent when it arrived gets one as soon
 * as an agent has room. Tenant by tenant, one transaction each; rows another transaction holds are
 * skipped (SKIP LOCKED) and picked up by the next run, so overlapping runs do no harm.
 */
export const TIME_TRIGGER_BATCH = 200;

export async function routingTimeTrigger(deps: Deps, now: Date): Promise<Record<string, number>> {
  const totals = { tenants: 0, examined: 0, routed: 0 };
  for (const tenant of await listTenants(deps.db)) {
    totals.tenants += 1;
    await inTransaction(deps, { tenantId: tenant.id, actor: SYSTEM_ACTOR, now }, async (ctx) => {
      const hasRules = await RoutingRuleRecord.scoped(ctx).where('routing_rules.active', true)
        .whereRaw("'time_trigger' = ANY(routing_rules.triggers)").first();
      if (!hasRules) return;
      const waiting = await Ticket.scoped(ctx)
        .whereNull('tickets.assigned_agent_id').whereNull('tickets.closed_at')
        .where((w) => w.whereNull('tickets.snoozed_until').orWhere('tickets.snoozed_until', '<=', now))
        .whereExists(Ticket.relatedQuery('status').whereIn('status.category', ['new', 'open']))
        .orderBy('tickets.created_at').orderBy('tickets.id').limit(TIME_TRIGGER_BATCH)
        .forUpdate().skipLocked();
      for (const ticket of waiting) {
        totals.examined += 1;
        if (await routeTicket(ctx, ticket, 'time_trigger')) totals.routed += 1;
      }
    });
  }
  return totals;
}
