import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { canConnect } from './connection.js';
import { runFailure, spawnFailure, embeddedFailure } from './embedded-failures.js';
import type { PostgresBinaries } from './postgres-binaries.js';
import type { OsUser } from './root-staging.js';

/**
 * Runs initdb and the postgres server of the embedded database as child processes. Every way a
 * child can fail (it cannot be executed, it exits early, it never gets ready) ends in a readable
 * AppError (embedded-failures.ts): the 'error' event of a child is always listened to, so a missing
 * or forbidden program can never crash the process with an unhandled event.
 */
export interface PostgresSpec {
  binaries: PostgresBinaries;
  clusterDir: string;
  port: number;
  /** The database superuser and its password (scram-sha-256). */
  user: string;
  password: string;
  /** The OS user to run as (under root: `postgres`); absent: as ourselves. */
  runAs?: OsUser;
  onLog(line: string): void;
}

export interface RunningPostgres {
  pid: number;
  /** Fast shutdown (SIGINT), waiting for the server to exit. Idempotent. */
  stop(): Promise<void>;
}

type Ended = { error: NodeJS.ErrnoException } | { code: number | null; signal: NodeJS.Signals | null };

interface Started {
  child: ChildProcess;
  output(): string;
  ended: Promise<Ended>;
}

/**
 * The child's environment: only what PostgreSQL needs. The parent's environment holds secrets
 * (DATABASE_URL, HELPDESK_SECRET_KEY) that another OS user must not read from /proc. The C locale
 * makes messages English (they are read for the cause of a failure) and the cluster's collation
 * byte order, the same on every machine.
 */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { LANG: 'C', LC_ALL: 'C', PATH: process.env.PATH ?? '/usr/bin:/bin' };
  if (process.env.TZ) env.TZ = process.env.TZ;
  return env;
}

function run(program: string, args: string[], spec: PostgresSpec, ownProcessGroup = false): Started {
  let output = '';
  const child = spawn(program, args, {
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
    // Not on Windows, where a detached child gets a console window of its own.
    detached: ownProcessGroup && process.platform !== 'win32',
    ...(spec.runAs ? { uid: spec.runAs.uid, gid: spec.runAs.gid } : {}),
  });
  const ended = new Promise<Ended>((resolve) => {
    child.once('error', (error) => resolve({ error }));
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  // Read both pipes for the whole life of the child: a full pipe would block the server.
  const collect = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    output = (output + text).slice(-20_000);
    for (const line of text.split('\n')) if (line.trim()) spec.onLog(line.trim());
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  return { child, output: () => output, ended };
}

function describeExit(ended: Ended): string {
  if ('error' in ended) return `failed (${ended.error.code})`;
  return ended.signal ? `was killed by ${ended.signal}` : `exited with code ${ended.code}`;
}

function failure(program: 'initdb' | 'postgres', path: string, started: Started, ended: Ended, spec: PostgresSpec) {
  if ('error' in ended) return spawnFailure(ended.error, path, spec.runAs?.name ?? null);
  return runFailure({
    program,
    output: started.output(),
    clusterDir: spec.clusterDir,
    port: spec.port,
    runAs: spec.runAs?.name ?? null,
    exit: describeExit(ended),
  });
}

/** Creates the cluster. The password goes through a file only the running user can read. */
export async function initCluster(spec: PostgresSpec): Promise<void> {
  const passwordFile = join(dirname(spec.clusterDir), `.pg-password-${randomBytes(6).toString('hex')}`);
  writeFileSync(passwordFile, spec.password + '\n', { mode: 0o600 });
  try {
    if (spec.runAs) chownSync(passwordFile, spec.runAs.uid, spec.runAs.gid);
    const started = run(
      spec.binaries.initdb,
      [`--pgdata=${spec.clusterDir}`, '--auth=scram-sha-256', `--username=${spec.user}`, `--pwfile=${passwordFile}`, '--encoding=UTF8', '--locale=C'],
      spec,
    );
    const ended = await started.ended;
    if ('error' in ended || ended.code !== 0) throw failure('initdb', spec.binaries.initdb, started, ended, spec);
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/**
 * Starts the server on 127.0.0.1:port (TCP only: no Unix socket, so nothing is written outside
 * the cluster) and waits until it accepts the configured login.
 *
 * `ownProcessGroup` (for `serve`): a Ctrl-C at a terminal, or `timeout`, signals the whole
 * foreground process group. In ours, PostgreSQL would start its own shutdown at once and cut
 * off the requests and jobs the daemon is still finishing; in a group of its own it is stopped
 * by `stop()`, after them. Should this process exit without calling it (a second Ctrl-C, a crash),
 * the server is told to stop as we exit, so it does not outlive us.
 */
export async function startPostgres(spec: PostgresSpec, options: { ownProcessGroup?: boolean } = {}): Promise<RunningPostgres> {
  const started = run(
    spec.binaries.postgres,
    ['-D', spec.clusterDir, '-p', String(spec.port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    spec,
    options.ownProcessGroup === true,
  );
  const state: { exited: Ended | null } = { exited: null };
  void started.ended.then((ended) => (state.exited = ended));
  if (options.ownProcessGroup) {
    const stopOnExit = () => { started.child.kill('SIGINT'); };
    process.on('exit', stopOnExit);
    void started.ended.then(() => process.off('exit', stopOnExit));
  }

  // Ready when the server says so (its messages are in English: see childEnv) and accepts our
  // login; the login is tried without that line too after a while, in case the wording changes.
  const url = `postgres://${encodeURIComponent(spec.user)}:${encodeURIComponent(spec.password)}@127.0.0.1:${spec.port}/postgres`;
  const begun = Date.now();
  for (;;) {
    await Promise.race([started.ended, new Promise((resolve) => setTimeout(resolve, 100))]);
    if (state.exited) throw failure('postgres', spec.binaries.postgres, started, state.exited, spec);
    const saysReady = started.output().includes('database system is ready to accept connections');
    if ((saysReady || Date.now() - begun > 5_000) && (await canConnect(url, 1000))) break;
    if (Date.now() - begun > READY_TIMEOUT_MS) {
      await stopChild(started);
      throw embeddedFailure('start_timeout', `PostgreSQL did not accept connections on port ${spec.port} within ${READY_TIMEOUT_MS / 1000} s. Its last words: ${started.output().trim().split('\n').slice(-3).join(' ') || 'none'}.`, {
        cluster: spec.clusterDir,
        port: spec.port,
      });
    }
  }

  let stopping: Promise<void> | null = null;
  return {
    pid: started.child.pid!,
    stop: () => (stopping ??= stopChild(started)),
  };
}

async function stopChild(started: Started): Promise<void> {
  const { child } = started;
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGINT');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), STOP_TIMEOUT_MS)));
  if ((await Promise.race([started.ended, late])) === 'late') {
    // Immediate shutdown: the server recovers from its WAL on the next start.
    child.kill('SIGQUIT');
    await started.ended;
  }
  clearTimeout(timer);
}
