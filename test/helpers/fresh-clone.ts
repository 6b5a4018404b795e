import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, cpSync, existsSync, lstatSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The README's two commands (`npm ci && npx helpdesk serve`) on a fresh copy of the project, the
 * way a new user runs them: a clone in a private directory, nothing installed, nothing running.
 */
export const ROOT = new URL('../../', import.meta.url).pathname.replace(/\/$/, '');

/** What a clone does not hold: installed packages, builds, data dirs, test output, git's own. */
const NOT_IN_A_CLONE = new Set(['node_modules', 'dist', '.helpdesk', '.tap', 'coverage', '.git']);

/** Copies the project's working tree (so uncommitted work is tested too) into `target`. */
export function copyProject(target: string): void {
  cpSync(ROOT, target, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => !relative(ROOT, source).split('/').some((part) => NOT_IN_A_CLONE.has(part)),
  });
}

export interface Account {
  name: string;
  uid: number;
  gid: number;
}

/** An unprivileged account to switch to (root only), or why there is none. */
export function unprivilegedAccount(): Account | string {
  if (process.getuid?.() !== 0) return 'the tests do not run as root, so they cannot switch to another user';
  if (spawnSync('setpriv', ['--version'], { stdio: 'ignore' }).status !== 0) return 'setpriv (util-linux) is not installed';
  const id = (flag: string) => spawnSync('id', [flag, 'nobody'], { encoding: 'utf8' });
  const uid = id('-u');
  const gid = id('-g');
  if (uid.status !== 0 || gid.status !== 0) return 'there is no user "nobody" to switch to';
  return { name: 'nobody', uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Gives a tree to an account (what a clone made by that user would be). */
export function chownTree(path: string, account: Account): void {
  chownSync(path, account.uid, account.gid);
  if (!lstatSync(path).isDirectory()) return;
  for (const name of readdirSync(path)) chownTree(join(path, name), account);
}

/**
 * A clean environment for the child: the machine's basics only. Nothing of the test runner (tap's
 * settings, the `npm_*` variables of `npm test`, which name root's npm cache) and no Helpdesk
 * settings: the README's commands run on defaults.
 */
export function cleanEnv(settings: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^(npm_|NPM_|TAP|_TAPJS|TS_NODE|NODE_OPTIONS|DATABASE_URL|HELPDESK_|PORT$|HOST$|LOG_LEVEL|NO_COLOR$|FORCE_COLOR$|COLOR$|INIT_CWD$)/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...settings };
}

export interface Run {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The exit code, or 128 + the signal number's name when killed. */
  exited: Promise<number | string | null>;
}

/**
 * Starts `command args` in `cwd`, as `account` when given (setpriv: no other groups), in a process
 * group of its own, so that a signal reaches every process of it, as Ctrl-C in a terminal does.
 */
export function start(command: string, args: string[], options: { cwd: string; env: Record<string, string>; as?: Account }): Run {
  const switchUser = options.as ? ['setpriv', `--reuid=${options.as.uid}`, `--regid=${options.as.gid}`, '--clear-groups', '--'] : [];
  // tap's process tracking puts its loader into NODE_OPTIONS of every child it sees spawned; a new
  // user's shell has none of it (and another user could not write tap's files), so `env` drops it.
  const argv = ['env', '-u', 'NODE_OPTIONS', '-u', '_TAPJS_PROCESSINFO_EXCLUDE_', ...switchUser, command, ...args];
  const child = spawn(argv[0]!, argv.slice(1), { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | string | null>((resolve) => {
    child.once('error', (error) => resolve(`spawn failed: ${error.message}`));
    child.once('close', (code, signal) => resolve(signal ?? code));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Sends a signal to the whole process group of a run. */
export function signalGroup(run: Run, signal: NodeJS.Signals): void {
  try {
    process.kill(-run.child.pid!, signal);
  } catch {
    // Already gone.
  }
}

/** Waits for a run to end, killing its group after `timeoutMs`. */
export async function finish(run: Run, timeoutMs: number): Promise<number | string | null> {
  const timer = setTimeout(() => signalGroup(run, 'SIGKILL'), timeoutMs);
  try {
    return await run.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until `pattern` appears on stdout; fails with the output when the run ends first or time runs out. */
export async function waitForOutput(run: Run, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  let ended = false;
  void run.exited.then(() => (ended = true));
  for (;;) {
    const match = pattern.exec(run.stdout());
    if (match) return match;
    if (ended || Date.now() > deadline) {
      throw new Error(`${ended ? 'ended' : 'timed out'} before ${pattern}\n--- stdout\n${run.stdout().slice(-6000)}\n--- stderr\n${run.stderr().slice(-6000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * `npx helpdesk` in a project links that project into npm's cache (`<cache>/_npx/<hash>/`); a
 * clone that is gone leaves a dead entry there, which this removes.
 */
export function forgetNpxLinks(projectDir: string, env: Record<string, string>): void {
  const cache = spawnSync('npm', ['config', 'get', 'cache'], { env, encoding: 'utf8' }).stdout?.trim();
  if (!cache || !existsSync(join(cache, '_npx'))) return;
  for (const entry of readdirSync(join(cache, '_npx'))) {
    const manifest = join(cache, '_npx', entry, 'package.json');
    if (existsSync(manifest) && readFileSync(manifest, 'utf8').includes(projectDir)) rmSync(join(cache, '_npx', entry), { recursive: true, force: true });
  }
}
