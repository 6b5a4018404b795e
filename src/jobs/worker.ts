import { workerData } from 'node:worker_threads';
import { loadConfig } from '../core/config.js';
import { closeDeps, createDeps } from '../core/deps.js';
import { createLogger } from '../core/logging.js';
import type { WorkerInput } from './manager.js';
import { runJob } from './runner.js';

/**
 * The body of every Bree job file: builds its own collaborators in the worker thread (a thread
 * shares no objects with the daemon), runs the job once through the runner (advisory lock,
 * job_runs row) and closes everything so the thread ends.
 */
export async function runInWorker(name: string): Promise<void> {
  const { databaseUrl, logFormat } = workerData as WorkerInput;
  const config = loadConfig(process.env);
  const deps = createDeps(config, databaseUrl, { poolMax: 3, log: createLogger(config.logLevel, { format: logFormat, noColor: config.noColor }) });
  try {
    const run = await runJob(deps, name);
    deps.log.info({ job: name, status: run.status, result: run.result }, 'job run finished');
  } catch {
    // Already recorded in job_runs and logged by the runner; the next schedule tries again.
  } finally {
    await closeDeps(deps);
  }
}
