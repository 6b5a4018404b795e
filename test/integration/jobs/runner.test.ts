import t from 'tap';
import type pg from 'pg';
import { testApp, tenantFixture } from '../../helpers/app.js';
import { CLI_ACTOR } from '../../../src/core/context.js';
import { AppError } from '../../../src/core/errors.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { createSession } from '../../../src/auth/sessions.js';
import { lockKey, runJob } from '../../../src/jobs/runner.js';
import { JOBS, type JobDef } from '../../../src/jobs/registry.js';

const DAY = 24 * 60 * 60 * 1000;

t.test('job runner', async (t) => {
  const env = await testApp(t);
  const db = env.deps.db;
  // The fixtures sign their admins in at the wall clock; the job runs an hour later.
  const now = new Date(Date.now() + 60 * 60 * 1000);

  /** A session created at `createdAt` (it expires 24 h later). */
  async function sessionAt(tenantId: string, userId: string, createdAt: Date): Promise<string> {
    return inTransaction(env.deps, { tenantId, actor: CLI_ACTOR, now: createdAt }, (ctx) => createSession(ctx, userId).then((s) => s.id));
  }

  await t.test('session-cleanup purges long-expired sessions in every tenant and keeps live ones', async (t) => {
    const a = await tenantFixture(env);
    const b = await tenantFixture(env);
    const oldA = await sessionAt(a.id, a.admin.id, new Date(now.getTime() - 10 * DAY));
    const oldB = await sessionAt(b.id, b.admin.id, new Date(now.getTime() - 9 * DAY));
    // Expired 3 days ago: kept for a week after expiry.
    const recentB = await sessionAt(b.id, b.admin.id, new Date(now.getTime() - 4 * DAY));
    const liveA = await sessionAt(a.id, a.admin.id, new Date(now.getTime() - 60_000));

    const run = await runJob(env.deps, 'session-cleanup', { now });
    t.equal(run.status, 'succeeded');
    t.equal(run.simulated_now, now.toISOString());
    t.match(run.result, { tenants: 2, sessions: 2 });
    t.equal(run.error, null);

    const left = (await db('sessions').select('id').comment('cross-tenant: test inspection')).map((r: { id: string }) => r.id);
    t.notOk(left.includes(oldA), 'tenant A: long-expired session removed');
    t.notOk(left.includes(oldB), 'tenant B: long-expired session removed');
    t.ok(left.includes(recentB), 'recently expired session kept');
    t.ok(left.includes(liveA), 'live session kept');

    const row = await db('job_runs').where({ id: run.id }).first();
    t.equal(row.name, 'session-cleanup');
    t.equal(row.status, 'succeeded');
    t.equal(row.simulated_now.toISOString(), now.toISOString());
    t.same(row.result, run.result);
    t.ok(row.finished_at >= row.started_at);
    t.same(env.guard.violations, [], 'every tenant-owned query was scoped');

    const again = await runJob(env.deps, 'session-cleanup', { now });
    t.match(again.result, { tenants: 2, sessions: 0 }, 'idempotent: a second run finds nothing to do');
  });

  await t.test('a run that finds the job running elsewhere is recorded as skipped', async (t) => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const jobs: JobDef[] = [{ name: 'slow', description: 'waits', schedule: '1h', run: async () => { started(); await gate; return { done: 1 }; } }];

    const first = runJob(env.deps, 'slow', { jobs });
    await running;
    const second = await runJob(env.deps, 'slow', { jobs });
    t.equal(second.status, 'skipped');
    t.equal(second.result, null);
    release();
    const done = await first;
    t.equal(done.status, 'succeeded');
    t.same(done.result, { done: 1 });
    const rows = await db('job_runs').where({ name: 'slow' }).orderBy('started_at').select('status');
    t.same(rows.map((r: { status: string }) => r.status).sort(), ['skipped', 'succeeded']);
    const third = await runJob(env.deps, 'slow', { jobs: [{ ...jobs[0]!, run: async () => ({}) }] });
    t.equal(third.status, 'succeeded', 'the lock was released');
  });

  await t.test('the lock is shared across processes: a lock held on another connection skips the run', async (t) => {
    const pool = db.client as { acquireConnection(): Promise<pg.PoolClient>; releaseConnection(c: pg.PoolClient): Promise<void> };
    const other = await pool.acquireConnection();
    await other.query('select pg_advisory_lock(hashtext($1))', [lockKey('session-cleanup')]);
    try {
      const run = await runJob(env.deps, 'session-cleanup', { now });
      t.equal(run.status, 'skipped');
      const row = await db('job_runs').where({ id: run.id }).first();
      t.equal(row.status, 'skipped');
      t.equal(row.result, null);
    } finally {
      await other.query('select pg_advisory_unlock(hashtext($1))', [lockKey('session-cleanup')]);
      await pool.releaseConnection(other);
    }
  });

  await t.test('a failing job is recorded as failed with its error, and the error propagates', async (t) => {
    const jobs: JobDef[] = [{ name: 'broken', description: 'fails', schedule: '1h', run: async () => { throw new Error('upstream unavailable'); } }];
    await t.rejects(runJob(env.deps, 'broken', { jobs }), { message: 'upstream unavailable' });
    const row = await db('job_runs').where({ name: 'broken' }).first();
    t.equal(row.status, 'failed');
    t.equal(row.error, 'upstream unavailable');
    t.ok(row.finished_at);
  });

  await t.test('an unknown job is a 404-style error naming the known jobs, and records nothing', async (t) => {
    const before = await db('job_runs').count<{ count: string }[]>('* as count');
    const error = await runJob(env.deps, 'no-such-job').catch((e: unknown) => e);
    t.ok(error instanceof AppError);
    t.match(error, { code: 'resource_not_found', status: 404, details: { known_jobs: JOBS.map((job) => job.name) } });
    t.match((error as Error).message, /known jobs: session-cleanup/);
    const after = await db('job_runs').count<{ count: string }[]>('* as count');
    t.equal(after[0]!.count, before[0]!.count);
  });
});
