import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'node:http';
import type { Test } from 'tap';

/**
 * End-to-end helpers: the real `helpdesk` executable (bin/run.js over dist/, built by `npm test`)
 * in child processes, with a clean environment so nothing of the test runner leaks in.
 */
const ROOT = new URL('../../', import.meta.url).pathname;
const BIN = join(ROOT, 'bin', 'run.js');

export type Env = Record<string, string>;

/** A fresh, private (0700) data dir, removed with the test; serve must make it usable itself. */
export function tempDataDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'helpdesk-e2e-'));
  t.teardown(() => removeDataDir(dir));
  return dir;
}

/** The embedded settings a data dir recorded (postgres.json), or null. */
export function embeddedSettings(dataDir: string): { port: number; cluster?: string; staging?: string } | null {
  const file = join(dataDir, 'postgres.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : null;
}

/** The embedded cluster directory of a data dir: `pg` inside it, or (under root) in its staging dir. */
export function clusterDirOf(dataDir: string): string {
  return resolve(dataDir, embeddedSettings(dataDir)?.cluster ?? 'pg');
}

/** Removes a data dir and, under root, the staging dir that holds its embedded cluster. */
export function removeDataDir(dataDir: string): void {
  let staging: string | undefined;
  try {
    staging = embeddedSettings(dataDir)?.staging;
  } catch {
    staging = undefined;
  }
  if (staging) rmSync(staging, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
}

/** The environment of a child: the machine's basics plus the given Helpdesk settings. */
export function cliEnv(settings: Env): Env {
  const env: Env = {};
  for (const [key, value] of Object.entries(process.env)) {
    // tap's own settings (it also turns colours off for its children) stay with tap.
    if (value === undefined || /^(TAP|_TAPJS|TS_NODE|NODE_OPTIONS|DATABASE_URL|HELPDESK_|PORT$|HOST$|LOG_LEVEL|NO_COLOR$|FORCE_COLOR$|COLOR$)/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, HELPDESK_SECRET_KEY: 'e2e-secret-key', LOG_LEVEL: 'warn', ...settings };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  json(): any;
}

/** Whether `script` (util-linux) can give a child a pseudo-terminal here. */
export function hasTerminal(): boolean {
  return spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * `helpdesk ARGS` as a child process: on pipes, or with `terminal` on a pseudo-terminal of
 * 50 rows and 200 columns (through `script`, which passes SIGTERM on; stdout and stderr then
 * arrive together on stdout, with CRLF line ends).
 */
function spawnHelpdesk(args: string[], env: Env, terminal: boolean, group = false) {
  if (!terminal) return spawn(process.execPath, [BIN, ...args], { env, cwd: ROOT, detached: group });
  const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
  const command = `stty rows 50 cols 200; exec ${[process.execPath, BIN, ...args].map(quote).join(' ')}`;
  return spawn('script', ['-qfec', command, '/dev/null'], { env: asPersonAtTerminal(env), cwd: ROOT });
}

/**
 * The environment of a person at a colour terminal. A CI runner sets CI (and sometimes
 * TERM=dumb), which makes colour detection switch bold and colours off: right for the product,
 * wrong for a test that asserts what a person sees. Settings a test passes (NO_COLOR) still win.
 */
function asPersonAtTerminal(env: Env): Env {
  const person: Env = {};
  for (const [key, value] of Object.entries(env)) {
    if (/^(CI|CONTINUOUS_INTEGRATION|BUILD_NUMBER|RUN_ID|GITHUB_ACTIONS|GITLAB_CI|BUILDKITE|TRAVIS|CIRCLECI|APPVEYOR|TEAMCITY_VERSION|TF_BUILD|CI_NAME)$/.test(key)) continue;
    person[key] = value;
  }
  return { ...person, TERM: 'xterm-256color', COLORTERM: 'truecolor' };
}

export interface RunOptions {
  timeoutMs?: number;
  /** Run on a pseudo-terminal (see spawnHelpdesk). */
  terminal?: boolean;
  /**
   * Lead a process group of its own, as a command at a shell's prompt does, so that a signal to
   * `-pid` reaches it and every process it started in that group (a Ctrl-C).
   */
  group?: boolean;
}

/** Runs `helpdesk ARGS` to completion. */
export function runCli(args: string[], env: Env, options: number | RunOptions = {}): Promise<CliResult> {
  const { timeoutMs = 30_000, terminal = false } = typeof options === 'number' ? { timeoutMs: options } : options;
  return new Promise((resolve, reject) => {
    const child = spawnHelpdesk(args, env, terminal);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`helpdesk ${args.join(' ')} timed out\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, json: () => JSON.parse(stdout) });
    });
  });
}

export interface Served {
  child: ChildProcess;
  /** `http://127.0.0.1:PORT` from the "listening" line. */
  url: string;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the process ended. */
  exited: Promise<number | null>;
}

/** Starts `helpdesk serve ARGS` and waits for its "listening" line; killed at teardown if still running. */
export function startServe(t: Test, args: string[], env: Env, options: number | RunOptions = {}): Promise<Served> {
  const { timeoutMs = 45_000, terminal = false, group = false } = typeof options === 'number' ? { timeoutMs: options } : options;
  const child = spawnHelpdesk(['serve', ...args], env, terminal, group);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start in time\n${stdout}\n${stderr}`)), timeoutMs);
    const check = () => {
      const match = /Helpdesk listening on (\S+)/.exec(stdout);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', check);
      resolve({ child, url: match[1]!, stdout: () => stdout, stderr: () => stderr, exited });
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before listening\n${stdout}\n${stderr}`));
    });
  });
}

/** The administrator login that a first start prints. */
export function printedLogin(stdout: string): { email: string; password: string } | null {
  const email = /^\s+email:\s+(\S+)$/m.exec(stdout);
  const password = /^\s+password:\s+(\S+)$/m.exec(stdout);
  return email && password ? { email: email[1]!, password: password[1]! } : null;
}

/** JSON over HTTP with fetch (Node 20). */
export async function http(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
    body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** Signs in through the public flow: GET /auth/csrf, then POST /auth/login. */
export async function login(baseUrl: string, tenant: string, email: string, password: string): Promise<string> {
  const headers = { 'x-helpdesk-tenant': tenant };
  const csrf = await http(`${baseUrl}/api/v1/auth/csrf`, { headers });
  if (csrf.status !== 200) throw new Error(`GET /auth/csrf answered ${csrf.status}`);
  const res = await http(`${baseUrl}/api/v1/auth/login`, { method: 'POST', headers: { ...headers, 'x-csrf-token': csrf.body.csrf_token }, body: { email, password } });
  if (res.status !== 200) throw new Error(`POST /auth/login answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.token;
}

/**
 * Runs a command class in this process (no node start-up per call), with `env` added to the
 * environment, capturing what it writes. Pipes are synchronous on Linux, so nothing of tap's own
 * output is written while a command runs.
 */
export async function runCommand(command: { run(argv?: string[], opts?: string): Promise<unknown> }, argv: string[], env: Env): Promise<CliResult> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  let stdout = '';
  let stderr = '';
  process.stdout.write = ((chunk: string | Uint8Array) => ((stdout += String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((stderr += String(chunk)), true)) as typeof process.stderr.write;
  process.exitCode = undefined;
  try {
    await command.run(argv, ROOT);
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
    process.env = saved;
  }
  const code = process.exitCode ?? 0;
  process.exitCode = undefined;
  return { code, stdout, stderr, json: () => JSON.parse(stdout) };
}

/** A PATCH /auth/me whose body is still arriving: it holds a graceful shutdown open until finished. */
export function halfSentRequest(url: string, token: string): { finish(): void; answered: Promise<{ status: number; body: any }> } {
  const body = JSON.stringify({ timezone: 'Europe/Berlin' });
  let finish = () => {};
  const answered = new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = request(`${url}/api/v1/auth/me`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.write(body.slice(0, 5));
    finish = () => req.end(body.slice(5));
  });
  return { finish: () => finish(), answered };
}
