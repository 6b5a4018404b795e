import type { Test } from 'tap';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PLATFORM_PACKAGES } from '../../src/db/postgres-binaries.js';
import { clusterDirOf, http, login, printedLogin, removeDataDir } from './cli.js';
import { chownTree, cleanEnv, copyProject, finish, forgetNpxLinks, isAlive, signalGroup, start, waitForOutput, type Account } from './fresh-clone.js';

const MINUTE = 60_000;

/**
 * A new user's first steps, end to end: the project copied into a fresh private directory (0700,
 * like root's home or `mktemp -d`), `npm ci`, `npx helpdesk serve` on defaults (only the port is
 * picked free), sign in with the printed login, Ctrl-C; then the same start on a machine without
 * the platform's PostgreSQL binaries must say to set DATABASE_URL. As `account` when given.
 */
export async function runReadmeCommands(t: Test, account?: Account): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'helpdesk-clone-'));
  const clone = join(base, 'helpdesk');
  const dataDir = join(clone, '.helpdesk');
  t.teardown(() => {
    removeDataDir(dataDir);
    if (!account) forgetNpxLinks(clone, cleanEnv());
    rmSync(base, { recursive: true, force: true });
  });
  t.equal(statSync(base).mode & 0o777, 0o700, 'a private directory');
  copyProject(clone);
  let env = cleanEnv();
  if (account) {
    // The user's own private directory, home and npm cache.
    const home = join(base, 'home');
    mkdirSync(home);
    chownTree(base, account);
    env = cleanEnv({ HOME: home, npm_config_cache: join(home, '.npm'), USER: account.name, LOGNAME: account.name });
  }
  const as = { cwd: clone, env, as: account };

  const install = start('npm', ['ci', '--no-audit', '--no-fund'], as);
  t.equal(await finish(install, 8 * MINUTE), 0, `npm ci\n${install.stderr().slice(-3000)}`);

  // Debug logs carry PostgreSQL's own output, for the failure message should the start stall.
  const serve = start('npx', ['helpdesk', 'serve', '--port', '0'], { ...as, env: { ...env, LOG_LEVEL: 'debug' } });
  t.teardown(() => signalGroup(serve, 'SIGKILL'));
  const url = (await waitForOutput(serve, /Helpdesk listening on (\S+)/, 4 * MINUTE))[1]!;
  const asRoot = !account && process.getuid?.() === 0;
  if (asRoot) {
    const notice = /^Running as root: .* system user "postgres", and its cluster and a copy of its programs are in (\S+), where that user can reach them/m.exec(serve.stdout());
    t.ok(notice, 'serve says where the cluster lives, and why');
    t.notOk(notice?.[1]?.startsWith(base), 'outside the private directory');
  } else {
    t.notMatch(serve.stdout(), /Running as root/);
    t.equal(clusterDirOf(dataDir), join(dataDir, 'pg'), 'the cluster is in the data dir');
  }

  const admin = printedLogin(serve.stdout());
  t.ok(admin, 'the first start prints a login');
  const token = await login(url, 'default', admin!.email, admin!.password);
  const me = await http(`${url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(me.status, 200, 'and it signs in');
  t.equal(me.body.email, admin!.email);

  const postmaster = Number(readFileSync(join(clusterDirOf(dataDir), 'postmaster.pid'), 'utf8').split('\n')[0]);
  t.ok(isAlive(postmaster), 'the embedded server runs');
  // Ctrl-C: the terminal signals the whole foreground group. npx dies of it at once; the daemon
  // finishes its shutdown (its output pipe keeps the run open until then).
  signalGroup(serve, 'SIGINT');
  const ended = await finish(serve, 2 * MINUTE);
  t.ok(ended === 0 || ended === 'SIGINT', `npx ended (${ended})`);
  t.match(serve.stdout(), /"msg":"stopped"/, `Ctrl-C stops the daemon cleanly\n${serve.stderr().slice(-3000)}`);
  t.notOk(isAlive(postmaster), 'nothing is left running');
  t.notOk(existsSync(join(dataDir, 'serve.lock')), 'the lock is released');
  t.equal(statSync(base).mode & 0o777, 0o700, 'the private directory was not loosened');

  // A machine for which npm has no PostgreSQL binaries (or that left them out).
  const platformPackage = PLATFORM_PACKAGES[`${process.platform}-${process.arch}`]!;
  rmSync(join(clone, 'node_modules', platformPackage), { recursive: true, force: true });
  const without = start('npx', ['helpdesk', 'serve', '--port', '0'], as);
  t.equal(await finish(without, 2 * MINUTE), 6, 'exit code 6 (not_ready)');
  const errorLines = without.stderr().split('\n').filter((line) => line.trim() && !line.startsWith('npm warn'));
  t.equal(errorLines.length, 1, `one paragraph:\n${without.stderr()}`);
  t.match(errorLines[0], /^Error \(not_ready\): The embedded PostgreSQL database cannot start: the package with its PostgreSQL binaries, \S+, is not installed.* Set DATABASE_URL to a PostgreSQL server/);
  t.notMatch(without.stderr(), /\n\s+at |Unhandled 'error' event/, 'no stack trace');
}
