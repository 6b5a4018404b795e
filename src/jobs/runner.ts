import type { Deps } from '../core/context.js';
import { AppError } from '../core/errors.js';
import { systemNow, toRfc3339, type Clock } from '../core/clock.js';
import { uuidv7 } from '../core/ids.js';
import { withSessionLock } from '../db/session-lock.js';
import { JOBS, findJob, type JobDef } from './registry.js';
import { wireDomain } from '../wiring.js';

/**
 * Runs one job once and records it in `job_runs`. A Postgres advisory lock per job name, held on
 * one dedicated connection for the whole run, guarantees that no two runs of a job overlap across
 * all daemons and CLI invocations on the database; a run that finds the lock taken is recorded as
 * `skipped` and does nothing.
 */
export type JobStatus = 'running' | 'succeeded' | 'failed' | 'skipped';

export interface JobRunOut {
  id: string;
  name: string;
  status: JobStatus;
  /** The simulated time the run was given (`--now`), else null. */
  simulated_now: string | null;
  started_at: string;
  finished_at: string | null;
  result: Record<string, unknown> | null;
  error: string | null;
}

export interface RunJobOptions {
  /** Run at this simulated time instead of the wall clock. */
  now?: Date | null;
  /** Wall clock for the run's own timestamps (started_at, finished_at). */
  clock?: Clock;
  /** The jobs to choose from (tests inject their own). */
  jobs?: readonly JobDef[];
}

export function lockKey(name: string): string {
  return `helpdesk-job:${name}`;
}

/** The job of that name, or a 404-style error listing the known ones. */
export function requireJob(name: string, jobs: readonly JobDef[] = JOBS): JobDef {
  const job = findJob(name, jobs);
  if (job) return job;
  const known = jobs.map((j) => j.name);
  throw new AppError('resource_not_found', `Job ${name} does not exist; known jobs: ${known.join(', ')}`, { known_jobs: known });
}

export async function runJob(deps: Deps, name: string, options: RunJobOptions = {}): Promise<JobRunOut> {
  wireDomain();
  const job = requireJob(name, options.jobs);
  const clock = options.clock ?? systemNow;
  const simulated = options.now ?? null;
  const run: JobRunOut = {
    id: uuidv7(),
    name,
    status: 'running',
    simulated_now: toRfc3339(simulated),
    started_at: toRfc3339(clock())!,
    finished_at: null,
    result: null,
    error: null,
  };

  const outcome = await withSessionLock(deps.db, lockKey(name), false, async () => {
    await insertRun(deps, run);
    try {
      run.result = await job.run(deps, simulated ?? clock());
      run.status = 'succeeded';
    } catch (error) {
      run.status = 'failed';
      run.error = error instanceof Error ? error.message : String(error);
      deps.log.error({ err: error, job: name }, 'job failed');
      throw error;
    } finally {
      run.finished_at = toRfc3339(clock());
      await deps.db('job_runs').where({ id: run.id }).update({
        status: run.status, finished_at: run.finished_at, result: run.result ? JSON.stringify(run.result) : null, error: run.error,
      });
    }
  });
  if (!outcome.held) {
    Object.assign(run, { status: 'skipped', finished_at: run.started_at });
    await insertRun(deps, run);
  }
  return run;
}

async function insertRun(deps: Deps, run: JobRunOut): Promise<void> {
  await deps.db('job_runs').insert({
    id: run.id,
    name: run.name,
    status: run.status,
    simulated_now: run.simulated_now,
    started_at: run.started_at,
    finished_at: run.finished_at,
    result: run.result ? JSON.stringify(run.result) : null,
    error: run.error,
  });
}
