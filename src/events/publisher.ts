import type { Knex } from 'knex';
import type { Ctx, Deps } from '../core/context.js';
import { prepared } from '../db/prepared.js';

/**
 * The event publisher (migrations/…_event_publisher.ts): writers commit events with `seq` NULL;
 * `events_publish_pending(tenant)` numbers every committed, unnumbered event of a tenant in one
 * short transaction, serialised per tenant by an advisory lock, and NOTIFYs `helpdesk_events` once.
 * Per tenant, `seq` order is therefore visibility order (the live stream's Last-Event-ID resume
 * relies on it); the webhook outbox does not use `seq` at all, only the NOTIFY as a wake-up.
 *
 * In a process, runs are coalesced per tenant: at most one is in flight and at most one waits
 * behind it. A commit that asks while a run is in flight joins the waiting one (the run in flight
 * may have taken its snapshot before that commit), so under load many commits share one run and
 * its one WAL flush. A run that fails is only logged: the events stay committed and unnumbered
 * until the next run of that tenant or the `event-publish` job.
 */
interface Lane {
  running: Promise<void> | null;
  queued: Promise<void> | null;
}

const lanes = new WeakMap<Knex, Map<string, Lane>>();

/** Numbers the committed, unnumbered events of `tenantId` (shared with concurrent callers). */
export function publishEvents(deps: Deps, tenantId: string): Promise<void> {
  let byTenant = lanes.get(deps.db);
  if (!byTenant) lanes.set(deps.db, (byTenant = new Map()));
  let lane = byTenant.get(tenantId);
  if (!lane) byTenant.set(tenantId, (lane = { running: null, queued: null }));
  const current = lane;
  if (current.queued) return current.queued;
  if (current.running) {
    current.queued = current.running.then(() => {
      current.queued = null;
      return start();
    });
    return current.queued;
  }
  return start();

  function start(): Promise<void> {
    const run: Promise<void> = publishNow(deps.publisher, tenantId)
      .then(() => undefined, (error: unknown) => deps.log.warn({ err: error, tenantId }, 'event publishing failed; the event-publish job retries'))
      .finally(() => {
        if (current.running === run) current.running = null;
        if (!current.running && !current.queued && byTenant!.get(tenantId) === current) byTenant!.delete(tenantId);
      });
    current.running = run;
    return run;
  }
}

/** One publisher run for the tenant, now: how many events it numbered. */
export async function publishNow(db: Knex, tenantId: string): Promise<number> {
  // Prepared: one text, run after every committed write.
  const result = await prepared(db.raw('SELECT events_publish_pending(?::uuid) AS numbered', [tenantId])) as { rows: Array<{ numbered: number }> };
  return Number(result.rows[0]?.numbered ?? 0);
}

const announced = new WeakSet<object>();

/**
 * Called by whatever records events in ctx: the tenant's publisher runs once ctx's transaction has
 * committed (once per transaction, however many events it recorded). A rolled-back transaction
 * runs no after-commit effect, and its events are gone.
 */
export function publishAfterCommit(ctx: Ctx): void {
  const trx = ctx.trx as Knex.Transaction;
  if (trx.isTransaction) {
    if (announced.has(trx)) return;
    announced.add(trx);
  }
  ctx.afterCommit(() => publishEvents(ctx.deps, ctx.tenantId));
}

/**
 * The `event-publish` job: numbers what a process left unnumbered (it died between its commit and
 * its publisher run, or the run failed), tenant by tenant. Harmless beside the in-process runs:
 * the advisory lock serialises them and a run finds nothing left to number.
 */
export async function publishPending(deps: Deps): Promise<Record<string, number>> {
  const rows: Array<{ tenant_id: string }> = await deps.db('events')
    .comment('cross-tenant: the event-publish job finds the tenants with unnumbered events')
    .distinct('tenant_id')
    .whereNull('seq');
  let events = 0;
  for (const row of rows) events += await publishNow(deps.db, row.tenant_id);
  return { tenants: rows.length, events };
}
