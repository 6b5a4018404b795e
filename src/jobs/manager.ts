import Bree from 'bree';
import { fileURLToPath } from 'node:url';
import type { LogFormat, Logger } from '../core/logging.js';
import { JOBS, type JobDef } from './registry.js';

/**
 * The scheduler of `helpdesk serve`: Bree runs each registered job on its schedule in a worker
 * thread (daemon/jobs/<name>), so a slow job never blocks request handling. `stop()` cancels the
 * schedules and waits for running workers to finish; a job ignores Bree's cancel message and runs
 * to completion, so shutdown never leaves a half-done run behind.
 */
export interface JobManager {
  stop(): Promise<void>;
}

export interface WorkerInput {
  databaseUrl: string;
  /** The daemon's log format, so a worker's lines look like the daemon's. */
  logFormat?: LogFormat;
  /** The job module to load when running from TypeScript sources (see the tsx shim). */
  script?: string;
}

export interface JobManagerOptions {
  databaseUrl: string;
  log: Logger;
  logFormat?: LogFormat;
  /** Defaults to the registry; tests pass jobs with shorter schedules. */
  jobs?: readonly JobDef[];
}

// Built (dist/src/jobs/manager.js) the job files are plain .js. Run from .ts sources (tsx, tap),
// worker threads do not inherit the TypeScript loader on Node 20, so they start through a shim
// that registers tsx and then imports the .ts job (STACK.md, "Bree worker threads").
const fromSources = import.meta.url.endsWith('.ts');

function workerFor(name: string, input: WorkerInput): { path: string; workerData: WorkerInput } {
  if (!fromSources) {
    return { path: fileURLToPath(new URL(`../../daemon/jobs/${name}.js`, import.meta.url)), workerData: input };
  }
  return {
    path: fileURLToPath(new URL('../../daemon/jobs/tsx-shim.mjs', import.meta.url)),
    workerData: { ...input, script: new URL(`../../daemon/jobs/${name}.ts`, import.meta.url).href },
  };
}

/** Bree wants a schedule as `interval` (human) or `cron` (five or six fields). */
function scheduleOf(schedule: string): { interval: string } | { cron: string } {
  return /\s/.test(schedule.trim()) ? { cron: schedule } : { interval: schedule };
}

export async function startJobManager(options: JobManagerOptions): Promise<JobManager> {
  const { log } = options;
  const bree = new Bree({
    root: false,
    doRootCheck: false,
    logger: {
      info: (message: unknown) => log.debug({ scheduler: true }, String(message)),
      warn: (message: unknown) => log.warn({ scheduler: true }, String(message)),
      error: (message: unknown) => log.error({ scheduler: true }, String(message)),
    },
    errorHandler: (error, data) => log.error({ err: error, job: data.name }, 'job worker failed'),
    jobs: (options.jobs ?? JOBS).map((job) => {
      const { path, workerData } = workerFor(job.name, { databaseUrl: options.databaseUrl, logFormat: options.logFormat });
      // timeout: false → the first run comes one interval after start, not at start-up.
      return { name: job.name, path, timeout: false as const, ...scheduleOf(job.schedule), worker: { workerData } };
    }),
  });
  await bree.start();
  log.info({ jobs: bree.config.jobs.map((j) => j.name) }, 'job scheduler started');
  return {
    stop: async () => {
      await bree.stop();
      log.info('job scheduler stopped');
    },
  };
}
