import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliEnv, runCli, tempDataDir } from '../helpers/cli.js';

const BIN = new URL('../../bin/run.js', import.meta.url).pathname;

// The CLI's side of the embedded database's failures: one readable paragraph and exit code 6,
// never a stack trace. (Each cause is provoked in test/integration/db/embedded.test.ts.)

/** Whether this machine lets us mount in a private mount namespace (root, or a user namespace). */
function canMountReadOnly(): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'helpdesk-ro-probe-'));
  try {
    const probe = spawnSync('unshare', ['-m', 'sh', '-c', 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"', 'sh', dir], { stdio: 'ignore' });
    return probe.status === 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

t.test('a data dir on a read-only file system', { skip: canMountReadOnly() ? false : 'cannot mount here (needs root and unshare): no read-only file system to test on' }, async (t) => {
  const dataDir = tempDataDir(t);
  const env = cliEnv({ HELPDESK_DATA_DIR: dataDir });
  delete env.HELPDESK_SECRET_KEY; // the generated key is the first thing written
  // The data dir is remounted read-only in a mount namespace of its own, gone with the process.
  const script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"';
  const result = spawnSync('unshare', ['-m', 'sh', '-c', script, 'sh', dataDir, process.execPath, BIN, 'serve', '--port', '0'], {
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  t.equal(result.status, 6, result.stderr);
  t.equal(result.stderr.trim().split('\n').length, 1, 'one paragraph');
  t.match(result.stderr, `Error (not_ready): Cannot write to the data dir ${dataDir}: it is on a read-only file system (EROFS).`);
  t.match(result.stderr, 'set HELPDESK_DATA_DIR to a directory you can write to');
});

t.test('a damaged postgres.json', async (t) => {
  const dataDir = tempDataDir(t);
  writeFileSync(join(dataDir, 'postgres.json'), '{"port": 5');
  const env = cliEnv({ HELPDESK_DATA_DIR: dataDir });

  const text = await runCli(['tenant', 'list'], env);
  t.equal(text.code, 6);
  t.equal(text.stdout, '');
  t.equal(text.stderr.trim().split('\n').length, 1, 'one paragraph');
  t.match(text.stderr, `Error (not_ready): The embedded PostgreSQL database cannot start: ${join(dataDir, 'postgres.json')} is damaged`);

  const json = await runCli(['tenant', 'list', '--json'], env);
  t.equal(json.code, 6);
  t.match(json.json(), { error: { code: 'not_ready', details: { database: 'embedded', reason: 'corrupt_settings' } } });
  t.equal(json.stderr, '');
});
