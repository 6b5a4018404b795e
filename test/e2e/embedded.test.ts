import t from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '../helpers/eventually.js';
import { cliEnv, clusterDirOf, halfSentRequest, http, login, printedLogin, runCli, startServe, tempDataDir } from '../helpers/cli.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

t.test('zero setup: embedded PostgreSQL in the data dir, one serve per data dir', async (t) => {
  const dataDir = tempDataDir(t);
  const env = cliEnv({ HELPDESK_DATA_DIR: dataDir });

  const served = await startServe(t, ['--port', '0', '--no-jobs'], env);
  const admin = printedLogin(served.stdout());
  t.ok(admin, 'the first start prints an administrator login');
  const token = await login(served.url, 'default', admin!.email, admin!.password);
  t.equal((await http(`${served.url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
  t.equal(readFileSync(join(dataDir, 'serve.lock'), 'utf8').trim(), String(served.child.pid), 'the lock holds the pid');
  const postmaster = Number(readFileSync(join(clusterDirOf(dataDir), 'postmaster.pid'), 'utf8').split('\n')[0]);
  t.ok(alive(postmaster), 'the embedded server runs');

  const second = await runCli(['serve', '--port', '0'], env);
  t.equal(second.code, 5, 'a second serve on the same data dir fails');
  t.match(second.stderr, `Error (conflict): another helpdesk serve (pid ${served.child.pid}) is already using data dir ${dataDir}`);
  t.equal((await http(`${served.url}/api/v1/healthz`)).status, 200, 'the first keeps running');

  const list = await runCli(['tenant', 'list', '--json'], env);
  t.equal(list.code, 0, list.stderr);
  t.match(list.json(), [{ slug: 'default', name: 'Default' }], 'the CLI uses the running server');
  t.equal(list.json().length, 1);
  t.ok(alive(postmaster), 'the CLI did not stop the server it shares');

  served.child.kill('SIGTERM');
  t.equal(await served.exited, 0, 'SIGTERM exits 0');
  t.notOk(alive(postmaster), 'the embedded server is stopped');
  t.notOk(existsSync(join(clusterDirOf(dataDir), 'postmaster.pid')), 'and shut down cleanly');
  t.notOk(existsSync(join(dataDir, 'serve.lock')), 'the lock is released');

  // A lock left by a crashed serve (its pid no longer runs; this one is above any pid_max) is stale.
  writeFileSync(join(dataDir, 'serve.lock'), '4194305\n');
  const again = await startServe(t, ['--port', '0', '--no-jobs'], env);
  t.equal(readFileSync(join(dataDir, 'serve.lock'), 'utf8').trim(), String(again.child.pid), 'a stale lock is taken over');
  t.equal(printedLogin(again.stdout()), null, 'the data dir keeps its tenant: no new login');
  again.child.kill('SIGTERM');
  t.equal(await again.exited, 0);
});

t.test('Ctrl-C reaches the whole process group: the daemon finishes, then stops the embedded database', async (t) => {
  const dataDir = tempDataDir(t);
  const env = cliEnv({ HELPDESK_DATA_DIR: dataDir });
  const postmasterPid = () => Number(readFileSync(join(clusterDirOf(dataDir), 'postmaster.pid'), 'utf8').split('\n')[0]);
  // Jobs on: the scheduler and the event listener hold connections when the signal comes.
  const served = await startServe(t, ['--port', '0'], env, { group: true });
  const admin = printedLogin(served.stdout())!;
  const token = await login(served.url, 'default', admin.email, admin.password);
  const postmaster = postmasterPid();
  const slow = halfSentRequest(served.url, token);
  await new Promise((resolve) => setTimeout(resolve, 200));
  process.kill(-served.child.pid!, 'SIGINT');
  await eventually(() => /shutting down/.test(served.stdout()));
  await new Promise((resolve) => setTimeout(resolve, 500));
  slow.finish();
  const answered = await slow.answered;
  t.equal(answered.status, 200, 'a request in flight still reads and writes the database');
  t.equal(answered.body.timezone, 'Europe/Berlin');
  t.equal(await served.exited, 0, 'exits 0');
  const output = served.stdout() + served.stderr();
  t.notMatch(output, /"level":(40|50|60)/, 'no warning or error while stopping');
  t.notMatch(output, /terminating connection|the database system is shutting down|Acquire connection error/, 'the database was not stopped under the daemon');
  t.notOk(alive(postmaster), 'the embedded server is stopped');
  t.notOk(existsSync(join(clusterDirOf(dataDir), 'postmaster.pid')), 'and shut down cleanly');

  // A second Ctrl-C stops at once; the database does not outlive the daemon.
  const again = await startServe(t, ['--port', '0'], env, { group: true });
  const second = postmasterPid();
  const held = halfSentRequest(again.url, token);
  held.answered.catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 200));
  process.kill(-again.child.pid!, 'SIGINT');
  // Signals of one kind do not queue: the second is sent once the first has been taken.
  await eventually(() => /shutting down/.test(again.stdout()));
  process.kill(-again.child.pid!, 'SIGINT');
  t.equal(await again.exited, 130, 'the second signal exits at once, 128 + SIGINT');
  await eventually(() => !alive(second), 15_000);
  t.notOk(alive(second), 'the embedded server was told to stop as the daemon exited');
});
