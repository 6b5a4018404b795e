import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The CI-sized benchmark (`npm run bench -- --quick`): a few thousand tickets seeded in SQL, the
 * daemon from dist/ as a child process, every scenario driven by autocannon. It fails only when
 * the suite crashes or a request errors; timings are printed, never asserted (CI machines vary).
 */
const root = new URL('../..', import.meta.url).pathname;

t.test('bench --quick: seeds, drives every scenario without a failed request, writes its results', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'helpdesk-bench-quick-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const results = join(dir, 'results.json');
  let output = '';
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'bench/suite.ts'), '--quick', '--no-build'], {
      cwd: root,
      env: {
        ...process.env,
        BENCH_DATABASE_URL: process.env.HELPDESK_TEST_ADMIN_URL ?? 'postgres://root@127.0.0.1:5432/postgres',
        BENCH_RESULTS: results,
        BENCH_SECONDS: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
    child.on('exit', (status) => resolve(status));
  });
  if (code !== 0) t.comment(output);
  t.equal(code, 0, 'the suite exits 0');
  const written = JSON.parse(readFileSync(results, 'utf8')) as {
    quick: boolean; errors: number; rss: { value_mb: number | null };
    scenarios: Array<{
      name: string; errors: number; requests: number; cpu: { daemon_ms: number | null; database_ms: number | null } | null;
      schedule: { daemon_thread_running: number | null; daemon_thread_waiting: number | null; machine_idle: number | null } | null;
    }>;
  };
  t.equal(written.quick, true);
  t.equal(written.errors, 0, 'no request failed');
  t.same(written.scenarios.map((s) => s.name.replace(/[\d,]+ rows deep/, 'N rows deep')), [
    'GET /healthz', 'GET /auth/me', 'ticket list, first page', 'ticket list, N rows deep', 'GET /tickets/:id', 'POST /tickets',
    'POST /tickets/:id/messages (public)',
  ]);
  // Each scenario's first request is checked by the suite itself (a failure counts as an error);
  // how many more fit in the time depends on the machine, so it is not asserted.
  t.match(output, /\| GET \/healthz \| 32 \|/, 'prints the table');
  if (process.platform === 'linux') {
    // CPU per request is read from /proc: every scenario that completed requests has the daemon's,
    // and a create costs the (local) database server something.
    for (const s of written.scenarios.filter((s) => s.requests > 0)) {
      t.ok(typeof s.cpu?.daemon_ms === 'number' && s.cpu.daemon_ms >= 0, `${s.name}: the daemon's CPU per request`);
    }
    const create = written.scenarios.find((s) => s.name === 'POST /tickets')!;
    if (create.requests > 0) t.ok((create.cpu?.database_ms ?? 0) > 0, 'a create costs the database server CPU');
    // Where the daemon's thread spent each scenario: shares of its wall time, and the machine's idle share.
    for (const s of written.scenarios.filter((s) => s.requests > 0)) {
      const { daemon_thread_running: running, daemon_thread_waiting: waiting, machine_idle: idle } = s.schedule ?? {};
      t.ok(typeof running === 'number' && running > 0 && running <= 1.05, `${s.name}: the daemon's thread ran (${running})`);
      t.ok(typeof waiting === 'number' && waiting >= 0 && running! + waiting <= 1.1, `${s.name}: its wait for a core (${waiting})`);
      t.ok(typeof idle === 'number' && idle >= 0 && idle <= 1, `${s.name}: the machine's idle share (${idle})`);
    }
    t.match(output, /daemon thread: running \d+ %, waiting for a core \d+ %; machine idle \d+ %/, 'prints them under each scenario');
  }
});
