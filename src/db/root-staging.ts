import { execFileSync } from 'node:child_process';
import {
  chmodSync, chownSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync,
  readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { embeddedFailure } from './embedded-failures.js';
import type { PostgresBinaries } from './postgres-binaries.js';

/**
 * PostgreSQL refuses to run as root, so under root the embedded server runs as the OS user
 * `postgres`. That user must reach both the programs and the cluster, which a data dir or a clone
 * under a private directory (root's home, `mktemp -d`: mode 0700) does not allow. Rather than
 * loosening directories the operator did not create for us, the cluster and a copy of the programs
 * go to a staging dir that root owns and others may only traverse:
 *
 *   /var/lib/helpdesk-postgres/            root 0755 (or /var/tmp/…, or the temp dir, when not writable)
 *     data-XXXXXX/                         root 0755, one per data dir, recorded in its postgres.json
 *       data-dir                           the data dir it belongs to (for the operator)
 *       runtime/{bin,lib,share}            a copy of the platform package's programs, root 0755/0644
 *       pg/                                the cluster: postgres 0700, as PostgreSQL requires
 */
export interface OsUser {
  name: string;
  uid: number;
  gid: number;
}

export const POSTGRES_OS_USER = 'postgres';

export function defaultStagingBases(): string[] {
  return [...new Set(['/var/lib/helpdesk-postgres', '/var/tmp/helpdesk-postgres', join(tmpdir(), 'helpdesk-postgres')])];
}

function idOf(args: string[]): number | null {
  try {
    const value = Number.parseInt(execFileSync('id', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(), 10);
    return Number.isInteger(value) ? value : null;
  } catch {
    return null;
  }
}

function lookupUser(name: string): OsUser | null {
  const uid = idOf(['-u', name]);
  const gid = idOf(['-g', name]);
  return uid === null || gid === null ? null : { name, uid, gid };
}

function groupExists(name: string): boolean {
  try {
    execFileSync('getent', ['group', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The `postgres` system user, created (no home, no login shell) when the machine has none. */
export function postgresOsUser(): OsUser {
  const existing = lookupUser(POSTGRES_OS_USER);
  if (existing) return existing;
  try {
    const group = groupExists(POSTGRES_OS_USER) ? ['--gid', POSTGRES_OS_USER] : ['--user-group'];
    execFileSync('useradd', ['--system', ...group, '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', POSTGRES_OS_USER], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? (error as Error).message).trim();
    throw embeddedFailure(
      'no_postgres_user',
      `PostgreSQL may not run as root, and the system user "${POSTGRES_OS_USER}" it would run as does not exist and could not be created ` +
        `(useradd: ${stderr || 'failed'}). Create it (useradd --system --user-group ${POSTGRES_OS_USER}), run Helpdesk as an ordinary user, ` +
        'or set DATABASE_URL.',
    );
  }
  const created = lookupUser(POSTGRES_OS_USER);
  if (!created) throw embeddedFailure('no_postgres_user', `the system user "${POSTGRES_OS_USER}" was created but cannot be looked up. Run Helpdesk as an ordinary user, or set DATABASE_URL.`);
  return created;
}

/**
 * Makes `base` usable as a staging base: root's, not writable by others, traversable by others
 * (and so by `postgres`) along its whole path. Directories we create get 0755; existing ones are
 * only checked, never changed. Returns why it is unusable, or null.
 */
function prepareBase(base: string): string | null {
  try {
    const firstCreated = mkdirSync(base, { recursive: true });
    if (firstCreated) {
      for (let dir = base; ; dir = dirname(dir)) {
        chmodSync(dir, 0o755);
        if (dir === firstCreated || dir === dirname(dir)) break;
      }
    }
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  }
  const stat = lstatSync(base);
  if (!stat.isDirectory()) return 'not a directory';
  if (stat.uid !== 0) return 'not owned by root';
  if (stat.mode & 0o022) return 'writable by other users';
  for (let dir = base; ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return `${dir} is closed to other users`;
    if (dir === dirname(dir)) return null;
  }
}

/** A new staging dir for `dataDir` under the first usable base. */
export function createStagingDir(dataDir: string, bases: string[] = defaultStagingBases()): string {
  const refused: string[] = [];
  for (const base of bases) {
    const problem = prepareBase(base);
    if (problem) {
      refused.push(`${base}: ${problem}`);
      continue;
    }
    try {
      const dir = mkdtempSync(join(base, 'data-'));
      chmodSync(dir, 0o755);
      writeFileSync(join(dir, 'data-dir'), resolve(dataDir) + '\n', { mode: 0o644 });
      return dir;
    } catch (error) {
      refused.push(`${base}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  throw embeddedFailure(
    'no_staging_dir',
    `running as root, Helpdesk runs PostgreSQL as the system user "${POSTGRES_OS_USER}" from a directory that user can reach, ` +
      `but none could be used (${refused.join('; ')}). Make ${bases[0]} a directory owned by root with mode 0755, run Helpdesk as an ordinary user, ` +
      'or set DATABASE_URL.',
    { tried: refused },
  );
}

/**
 * The programs, copied into `<staging>/runtime` (once; again when the source changes, e.g. after an
 * upgrade). Read and execute rights for everyone; the copy is root's, so `postgres` cannot alter it.
 * Copied to a temporary name and renamed, so a half-made copy is never used.
 */
export function stageRuntime(binaries: PostgresBinaries, stagingDir: string): PostgresBinaries {
  const target = join(stagingDir, 'runtime');
  const stamp = join(target, '.source');
  const staged: PostgresBinaries = {
    home: target,
    initdb: join(target, relative(binaries.home, binaries.initdb)),
    postgres: join(target, relative(binaries.home, binaries.postgres)),
    source: binaries.source,
  };
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === binaries.source) return staged;

  const temporary = `${target}.${process.pid}.tmp`;
  rmSync(temporary, { recursive: true, force: true });
  mkdirSync(temporary, { mode: 0o755 });
  chmodSync(temporary, 0o755);
  for (const part of ['bin', 'lib', 'share']) {
    if (existsSync(join(binaries.home, part))) copyTree(join(binaries.home, part), join(temporary, part));
  }
  writeFileSync(join(temporary, '.source'), binaries.source, { mode: 0o644 });
  rmSync(target, { recursive: true, force: true });
  renameSync(temporary, target);
  return staged;
}

/** Copies a tree: symlinks as they are (the libraries' links are relative), files 0755 or 0644. */
function copyTree(from: string, to: string): void {
  mkdirSync(to);
  chmodSync(to, 0o755);
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) copyTree(source, target);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else if (entry.isFile()) {
      copyFileSync(source, target);
      // An executable stays executable (for everyone); a file that is not, stays not.
      chmodSync(target, statSync(source).mode & 0o100 ? 0o755 : 0o644);
    }
  }
}

/** The cluster directory before initdb: owned by `owner`, mode 0700, as PostgreSQL requires. */
export function prepareClusterDir(clusterDir: string, owner: OsUser): void {
  mkdirSync(clusterDir, { recursive: true });
  chownSync(clusterDir, owner.uid, owner.gid);
  chmodSync(clusterDir, 0o700);
}
