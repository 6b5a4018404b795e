import type { Ctx, Deps } from '../core/context.js';

/**
 * Starting the knowledge base's jobs (`kb-ingest`, `kb-crawl`) right after a commit in the process
 * that queued the work; their schedules pick the work up otherwise (another daemon, a restart).
 * The jobs area lists these jobs, so the app supplies the starter (daemon/app.ts) rather than this
 * area importing the job runner.
 */
export type KbJobName = 'kb-ingest' | 'kb-crawl';
type Starter = (deps: Deps, name: KbJobName) => Promise<unknown>;

let starter: Starter | null = null;
const running = new Set<Promise<unknown>>();

export function setKbJobStarter(start: Starter): void {
  starter = start;
}

/** Jobs started by this process and not finished yet (tests and shutdown await them). */
export async function runningKbJobs(): Promise<void> {
  while (running.size) await Promise.all([...running]);
}

export function nudge(ctx: Ctx, name: KbJobName): void {
  const { deps } = ctx;
  ctx.afterCommit(() => {
    if (!starter) return;
    const job = starter(deps, name).catch((error: unknown) => deps.log.error({ err: error }, `${name} job failed`));
    running.add(job);
    void job.finally(() => running.delete(job));
  });
}
