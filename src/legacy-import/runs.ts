import { SYSTEM_ACTOR, type Ctx, type Deps, type Actor } from '../core/context.js';
import { systemNow } from '../core/clock.js';
import { errors } from '../core/errors.js';
import { uuidv7 } from '../core/ids.js';
import { insertScoped, scoped } from '../db/tenant-scope.js';
import { openSource, parseDsn, probe, redactDsn } from './source.js';
import { RESULT_KEYS, runLegacyImport, type ImportResult } from './writer.js';
import type { ImportRun, StartImportBody } from './schemas.js';

/**
 * The REST face of the import: test a connection, queue a run, read its status. A queued run is
 * run by the `legacy-import` background job, which writes its progress and result to
 * `legacy_imports`.
 */
export async function testConnection(ctx: Ctx, source: string): Promise<{ ok: true; version: string; counts: Record<string, number> }> {
  void ctx;
  const src = await openSource(source);
  try {
    return { ok: true, ...(await probe(src)) };
  } finally {
    await src.close();
  }
}

const running = new Set<Promise<unknown>>();

/**
 * Starts the `legacy-import` job in this process. The jobs area lists this area's job, so the
 * composition root (src/wiring.ts) supplies the starter rather than this file importing the runner.
 */
type JobStarter = (deps: Deps) => Promise<unknown>;
let startJob: JobStarter | null = null;
export function setImportJobStarter(starter: JobStarter): void {
  startJob = starter;
}

/** Nudges started by this process and not finished yet (tests and shutdown await them). */
export function runningImports(): Promise<void> {
  return Promise.all([...running]).then(() => undefined);
}

/**
 * Queues a run: the row holds the source encrypted (for the job) and without password (to show).
 * After commit the `legacy-import` job is nudged in this process; its schedule picks the run up
 * otherwise (another daemon, or this one after a restart).
 */
export async function startImport(ctx: Ctx, input: StartImportBody): Promise<{ id: string; status: 'queued' }> {
  parseDsn(input.source);
  const timezone = input.source_timezone ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw errors.invalid('source_timezone', 'is not a known time zone');
  }
  const id = uuidv7(ctx.now.getTime());
  const { actor } = ctx;
  await insertScoped(ctx, 'legacy_imports', {
    id, source: redactDsn(input.source), source_enc: ctx.deps.box.encrypt(input.source), source_timezone: timezone,
    dry_run: Boolean(input.dry_run), status: 'queued', created_at: ctx.now,
    actor: JSON.stringify({ type: actor.type, user_id: actor.userId, name: actor.name, role: actor.role, api_key_id: actor.apiKeyId }),
  });
  const { deps } = ctx;
  ctx.afterCommit(() => {
    if (!startJob) return; // no starter wired: the job's schedule picks the run up
    const job = startJob(deps).catch((error: unknown) => deps.log.error({ err: error }, 'legacy import job failed'));
    running.add(job);
    void job.finally(() => running.delete(job));
  });
  return { id, status: 'queued' };
}

interface RunRow {
  tenant_id: string; id: string; source_enc: string | null; source_timezone: string; dry_run: boolean;
  status: string; started_at: Date | null; actor: { type: Actor['type']; user_id: string | null; name: string; role: Actor['role']; api_key_id: string | null } | null;
}

/**
 * The `legacy-import` job: claims the oldest queued run (FOR UPDATE SKIP LOCKED) and runs it, then
 * the next, until none is left. The job runner holds the job's lock, so no other process runs an
 * import meanwhile: a row still `running` was claimed by a process that died (a daemon restart, a
 * kill) and is claimed again; the import resumes from its map of legacy ids.
 */
export async function legacyImportJob(deps: Deps, now: Date): Promise<{ runs: number; resumed: number }> {
  const out = { runs: 0, resumed: 0 };
  for (;;) {
    const run = await deps.db.transaction(async (trx) => {
      const row = await trx<RunRow>('legacy_imports').whereIn('status', ['queued', 'running'])
        .orderBy('created_at').orderBy('id').limit(1).forUpdate().skipLocked()
        .comment("cross-tenant: the legacy-import job walks every tenant's queued runs").first();
      if (!row) return null;
      await trx('legacy_imports').where({ tenant_id: row.tenant_id, id: row.id })
        .update({ status: 'running', started_at: row.started_at ?? now, attempts: trx.raw('attempts + 1') });
      return row;
    });
    if (!run) return out;
    out.runs += 1;
    if (run.status === 'running') out.resumed += 1;
    await runClaimed(deps, run, run.started_at ?? now);
  }
}

async function runClaimed(deps: Deps, run: RunRow, startedAt: Date): Promise<void> {
  const scope = { trx: deps.db, tenantId: run.tenant_id };
  const row = scoped(scope, 'legacy_imports').where({ id: run.id });
  const actor: Actor = run.actor
    ? { type: run.actor.type, userId: run.actor.user_id, name: run.actor.name, role: run.actor.role, apiKeyId: run.actor.api_key_id, sessionId: null, scopes: ['admin'] }
    : SYSTEM_ACTOR;
  const finish = (status: 'completed' | 'failed', result: unknown) => row.clone().update({
    status, phase: null, finished_at: systemNow(), result: JSON.stringify(result), source_enc: null,
  });
  if (!run.source_enc) {
    await finish('failed', { errors: [{ kind: 'source', legacy_id: '', message: 'the source of this run is no longer stored' }] });
    return;
  }
  let result: ImportResult;
  let saved = 0;
  try {
    result = await runLegacyImport(deps, run.tenant_id, actor, startedAt, {
      source: deps.box.decrypt(run.source_enc), timezone: run.source_timezone, dryRun: run.dry_run,
      // Progress for polling: the phase and the result so far, at most once a second.
      onProgress: async (phase, so) => {
        if (systemNow().getTime() - saved < 1000) return;
        saved = systemNow().getTime();
        await row.clone().update({ phase, result: JSON.stringify(so) });
      },
    });
  } catch (error) {
    await finish('failed', { errors: [{ kind: 'source', legacy_id: '', message: (error as Error).message || 'the import failed' }] });
    return;
  }
  await finish('completed', result);
}

const zero = () => Object.fromEntries(RESULT_KEYS.map((k) => [k, 0])) as ImportResult['counts'];

export async function getImport(ctx: Ctx, id: string): Promise<ImportRun> {
  const row = await scoped(ctx, 'legacy_imports').where({ id }).first();
  if (!row) throw errors.notFound('legacy_import', id);
  const result = (row.result ?? {}) as Partial<ImportResult>;
  return {
    id: row.id,
    status: row.status,
    phase: row.phase ?? null,
    source: row.source,
    dry_run: row.dry_run,
    counts: { ...zero(), ...result.counts },
    skipped: { ...zero(), ...result.skipped },
    errors: result.errors ?? [],
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}
