import type { Ctx, Deps, Actor } from '../core/context.js';
import { systemNow } from '../core/clock.js';
import { errors } from '../core/errors.js';
import { uuidv7 } from '../core/ids.js';
import { insertScoped, scoped } from '../db/tenant-scope.js';
import { openSource, parseDsn, probe, redactDsn } from './source.js';
import { RESULT_KEYS, runLegacyImport, type ImportResult } from './writer.js';
import type { ImportRun, StartImportBody } from './schemas.js';

/**
 * The REST face of the import: test a connection, queue a run, read its status. A queued run starts
 * after the request commits, in the same process, and writes its result to `legacy_imports`. The
 * source is kept in memory for the run only; the row holds it without password.
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

const running = new Set<Promise<void>>();

/** Runs started by this process and not finished yet (tests and shutdown await them). */
export function runningImports(): Promise<void> {
  return Promise.all([...running]).then(() => undefined);
}

export async function startImport(ctx: Ctx, input: StartImportBody): Promise<{ id: string; status: 'queued' }> {
  parseDsn(input.source);
  const timezone = input.source_timezone ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw errors.invalid('source_timezone', 'is not a known time zone');
  }
  const id = uuidv7(ctx.now.getTime());
  await insertScoped(ctx, 'legacy_imports', {
    id, source: redactDsn(input.source), dry_run: Boolean(input.dry_run), status: 'queued', created_at: ctx.now,
  });
  const { deps, tenantId, actor } = ctx;
  ctx.afterCommit(() => {
    const job = runQueued(deps, tenantId, actor, id, input.source, timezone, Boolean(input.dry_run));
    running.add(job);
    void job.finally(() => running.delete(job));
  });
  return { id, status: 'queued' };
}

async function runQueued(deps: Deps, tenantId: string, actor: Actor, id: string, source: string, timezone: string, dryRun: boolean): Promise<void> {
  const scope = { trx: deps.db, tenantId };
  try {
    // The wall clock at the edge: the run is the operation, like a command's start.
    const startedAt = systemNow();
    await scoped(scope, 'legacy_imports').where({ id }).update({ status: 'running', started_at: startedAt });
    let result: ImportResult;
    try {
      result = await runLegacyImport(deps, tenantId, actor, startedAt, { source, timezone, dryRun });
    } catch (error) {
      const message = (error as Error).message || 'the import failed';
      await scoped(scope, 'legacy_imports').where({ id }).update({
        status: 'failed', finished_at: systemNow(), result: JSON.stringify({ errors: [{ kind: 'source', legacy_id: '', message }] }),
      });
      return;
    }
    await scoped(scope, 'legacy_imports').where({ id }).update({ status: 'completed', finished_at: systemNow(), result: JSON.stringify(result) });
  } catch (error) {
    deps.log.error({ err: error, import_id: id }, 'legacy import run failed');
  }
}

const zero = () => Object.fromEntries(RESULT_KEYS.map((k) => [k, 0])) as ImportResult['counts'];

export async function getImport(ctx: Ctx, id: string): Promise<ImportRun> {
  const row = await scoped(ctx, 'legacy_imports').where({ id }).first();
  if (!row) throw errors.notFound('legacy_import', id);
  const result = (row.result ?? {}) as Partial<ImportResult>;
  return {
    id: row.id,
    status: row.status,
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
