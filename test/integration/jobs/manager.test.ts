import t from 'tap';
import { testApp } from '../../helpers/app.js';
import { startJobManager } from '../../../src/jobs/manager.js';
import { JOBS } from '../../../src/jobs/registry.js';

t.test('the scheduler runs jobs in worker threads and waits for them on stop', async (t) => {
  const env = await testApp(t);
  // The worker thread reads its configuration from the environment, like a daemon's would.
  process.env.HELPDESK_SECRET_KEY = 'test-secret-key';
  process.env.HELPDESK_DATA_DIR = env.config.dataDir;
  process.env.LOG_LEVEL = 'silent';

  const manager = await startJobManager({
    databaseUrl: env.databaseUrl,
    log: env.deps.log,
    jobs: [{ ...JOBS.find((j) => j.name === 'session-cleanup')!, schedule: '200ms' }],
  });
  let runs: Array<{ status: string }> = [];
  // Generous: a worker thread compiles its TypeScript on start, slow on a loaded machine.
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    runs = await env.deps.db('job_runs').where({ name: 'session-cleanup' }).select('status');
    if (runs.some((r) => r.status === 'succeeded')) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await manager.stop();
  t.ok(runs.some((r) => r.status === 'succeeded'), 'a scheduled run succeeded');

  const afterStop = await env.deps.db('job_runs').where({ name: 'session-cleanup' }).select('status', 'finished_at');
  t.notOk(afterStop.some((r: { status: string }) => r.status === 'running'), 'stop() waited: no run left half-done');
  const count = afterStop.length;
  await new Promise((resolve) => setTimeout(resolve, 500));
  const later = await env.deps.db('job_runs').where({ name: 'session-cleanup' }).count<{ count: string }[]>('* as count');
  t.equal(Number(later[0]!.count), count, 'no run is scheduled after stop()');
});
