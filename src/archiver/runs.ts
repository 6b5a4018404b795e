import type { Knex } from 'knex';
import type { Ctx, Deps } from '../core/context.js';
import { errors } from '../core/errors.js';
import { systemNow, toRfc3339 } from '../core/clock.js';
import { uuidv7 } from '../core/ids.js';
import { insertScoped, scoped } from '../db/tenant-scope.js';
import { recordAudit } from '../audit/service.js';
import { advance, type BatchRow } from './batches.js';
import { archiveStoreFor } from './store.js';
import type { ArchiverStatus, ArchiveRunIn } from './schemas.js';

/**
 * The ticket archiver's runs (CONTRACT §19): POST /ticket-archiver/run queues one, the
 * `ticket-archive` job runs it (nudged at once in the daemon that took it; its schedule is the
 * fallback and resumes a run whose process died). A run moves closed tickets older than its
 * cutoff, batch by batch (batches.ts), into Parquet files in the object store; a dry run only
 * counts them.
 */
const DAY_MS = 86_400_000;

type JobStarter = (deps: Deps) => Promise<unknown>;
let startJob: JobStarter | null = null;
const running = new Set<Promise<unknown>>();

/** Set by the daemon (app.ts): the jobs area lists this job, so it cannot be imported from here. */
export function setArchiveJobStarter(starter: JobStarter | null): void {
  startJob = starter;
}

/** Nudges started by this process and not finished (tests and shutdown await them). */
export function runningArchives(): Promise<void> {
  return Promise.all([...running]).then(() => undefined);
}

export async function startArchiveRun(ctx: Ctx, input: ArchiveRunIn): Promise<{ run_id: string }> {
  const days = input.older_than_days ?? 365;
  const dryRun = input.dry_run ?? false;
  // One run at a time per tenant: the lock orders two requests arriving together.
  await ctx.trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`archive-run:${ctx.tenantId}`]);
  const active = await scoped(ctx, 'archive_runs').whereIn('status', ['queued', 'running']).first('id');
  if (active) throw errors.conflict(`Archive run ${active.id} is still in progress`, { run_id: active.id });
  const id = uuidv7(ctx.now.getTime());
  const cutoff = new Date(ctx.now.getTime() - days * DAY_MS);
  await insertScoped(ctx, 'archive_runs', {
    id, status: 'queued', dry_run: dryRun, older_than_days: days, cutoff, requested_by: ctx.actor.userId, created_at: ctx.now,
  });
  await recordAudit(ctx, { action: 'ticket_archiver.run_requested', resourceType: 'archive_run', resourceId: id, changes: { older_than_days: days, dry_run: dryRun, cutoff: toRfc3339(cutoff) } });
  const { deps } = ctx;
  ctx.afterCommit(() => {
    if (!startJob) return;
    const job = startJob(deps).catch((error: unknown) => deps.log.error({ err: error }, 'ticket archive job failed'));
    running.add(job);
    void job.finally(() => running.delete(job));
  });
  return { run_id: id };
}

interface RunRow {
  tenant_id: string; id: string; status: string; dry_run: boolean; cutoff: Date; older_than_days: number;
  tickets: number; bytes: string | number; files: number; error: string | null;
  created_at: Date; started_at: Date | null; finished_at: Date | null;
}

export async function archiverStatus(ctx: Ctx): Promise<ArchiverStatus> {
  const [{ n }] = await scoped(ctx, 'archived_tickets').count('* as n') as [{ n: string }];
  const last = await scoped(ctx, 'archive_runs').orderBy('created_at', 'desc').orderBy('id', 'desc').first() as RunRow | undefined;
  return {
    archived_tickets: Number(n),
    last_run: last ? {
      run_id: last.id, status: last.status as 'queued' | 'running' | 'completed' | 'failed',
      dry_run: last.dry_run, older_than_days: last.older_than_days, cutoff: toRfc3339(last.cutoff)!,
      tickets: last.tickets, bytes: Number(last.bytes), files: last.files,
      started_at: toRfc3339(last.started_at), finished_at: toRfc3339(last.finished_at), error: last.error,
    } : null,
  };
}

/** Closed before the cutoff, and no ticket staying hot was merged into it (its reference must hold). */
const ARCHIVABLE = `
      FROM tickets t
      JOIN statuses s ON s.tenant_id = t.tenant_id AND s.id = t.status_id
     WHERE t.tenant_id = :tenant AND s.category = 'closed' AND t.closed_at < :cutoff
       AND NOT EXISTS (
         SELECT 1 FROM tickets m
           JOIN statuses ms ON ms.tenant_id = m.tenant_id AND ms.id = m.status_id
          WHERE m.tenant_id = t.tenant_id AND m.merged_into_id = t.id
            AND NOT (ms.category = 'closed' AND m.closed_at < :cutoff))`;

/** The next batch: oldest first, merged sources before the rest. */
async function candidates(scope: { trx: Knex; tenantId: string }, cutoff: Date, limit: number): Promise<string[]> {
  const { rows } = await scope.trx.raw(`SELECT t.id ${ARCHIVABLE} ORDER BY (t.merged_into_id IS NULL), t.closed_at, t.id LIMIT :limit`,
    { tenant: scope.tenantId, cutoff, limit }) as { rows: { id: string }[] };
  if (!rows.length) return [];
  // A target whose merged sources are not in this batch waits for a later one.
  const ids = new Set(rows.map((r) => r.id));
  const pointedAt = await scoped(scope, 'tickets').whereIn('merged_into_id', [...ids]).select('id', 'merged_into_id') as { id: string; merged_into_id: string }[];
  for (const p of pointedAt) if (!ids.has(p.id)) ids.delete(p.merged_into_id);
  return [...ids];
}

async function countCandidates(scope: { trx: Knex; tenantId: string }, cutoff: Date): Promise<number> {
  const { rows } = await scope.trx.raw(`SELECT count(*) AS n ${ARCHIVABLE}`, { tenant: scope.tenantId, cutoff }) as { rows: { n: string }[] };
  return Number(rows[0]!.n);
}

async function runOne(deps: Deps, run: RunRow): Promise<void> {
  const scope = { trx: deps.db, tenantId: run.tenant_id };
  const row = () => scoped(scope, 'archive_runs').where({ id: run.id });
  try {
    if (run.dry_run) {
      const n = await countCandidates(scope, run.cutoff);
      await row().update({ status: 'completed', tickets: n, finished_at: systemNow() });
      return;
    }
    const store = archiveStoreFor(deps.config);
    // A batch left half-way by a process that died is finished first, whatever run it was part of.
    const open = await scoped(scope, 'archive_batches').whereNot('state', 'deleted').orderBy('created_at').orderBy('id') as BatchRow[];
    for (const batch of open) await advance(deps.db, store, batch, systemNow);
    for (;;) {
      const ids = await candidates(scope, run.cutoff, deps.config.archiveBatchSize);
      if (!ids.length) break;
      const now = systemNow();
      const [batch] = await insertScoped<BatchRow>(scope, 'archive_batches', {
        id: uuidv7(now.getTime()), run_id: run.id, state: 'writing', ticket_ids: ids, created_at: now, updated_at: now,
      });
      await advance(deps.db, store, batch!, systemNow);
    }
    await row().update({ status: 'completed', finished_at: systemNow(), error: null });
  } catch (error) {
    deps.log.error({ err: error, run_id: run.id }, 'archive run failed');
    await row().update({ status: 'failed', finished_at: systemNow(), error: (error as Error).message || 'the archive run failed' });
  }
}

/**
 * The `ticket-archive` job: claims the oldest queued run (or a `running` one whose process died:
 * the job runner's lock means no other process is running it) and runs it, until none is left.
 */
export async function ticketArchiveJob(deps: Deps, now: Date): Promise<{ runs: number; resumed: number }> {
  const out = { runs: 0, resumed: 0 };
  for (;;) {
    const run = await deps.db.transaction(async (trx) => {
      const found = await trx<RunRow>('archive_runs').whereIn('status', ['queued', 'running'])
        .orderBy('created_at').orderBy('id').limit(1).forUpdate().skipLocked()
        .comment("cross-tenant: the ticket-archive job walks every tenant's queued runs").first();
      if (!found) return null;
      await trx('archive_runs').where({ tenant_id: found.tenant_id, id: found.id })
        .update({ status: 'running', started_at: found.started_at ?? now, attempts: trx.raw('attempts + 1') });
      return found;
    });
    if (!run) return out;
    out.runs += 1;
    if (run.status === 'running') out.resumed += 1;
    await runOne(deps, run);
  }
}
