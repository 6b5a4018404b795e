import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';

/**
 * A real IMAP server for tests: Dovecot (Debian's dovecot-imapd, installed by .ci/run), started
 * on a loopback port as an unprivileged process with its own configuration in a temp dir, plain
 * text login, Maildir storage. Under root it runs as `nobody` (setpriv). `dovecotMissing()` gives
 * the reason to skip when it is not installed; tests skip with that reason when it is not.
 */
export const DOVECOT = '/usr/sbin/dovecot';

export function dovecotMissing(): string | false {
  return existsSync(DOVECOT) ? false : `Dovecot is not installed (${DOVECOT}); .ci/run installs dovecot-imapd`;
}

export interface Dovecot {
  host: string;
  port: number;
  users: Record<string, string>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function idOf(flag: '-u' | '-g', name: string): number {
  return Number(spawnSync('id', [flag, name], { encoding: 'utf8' }).stdout.trim());
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`dovecot exited with ${child.exitCode}: ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => { socket.destroy(); resolve(true); });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`dovecot did not listen on ${port}: ${log()}`);
}


/** Starts Dovecot with the given users (name → password); stopped at the test's end. */
export async function startDovecot(t: Test, users: Record<string, string>): Promise<Dovecot> {
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? 'nobody' : spawnSync('id', ['-un'], { encoding: 'utf8' }).stdout.trim();
  const uid = asRoot ? idOf('-u', 'nobody') : process.getuid!();
  const gid = asRoot ? idOf('-g', 'nobody') : process.getgid!();
  const group = spawnSync('getent', ['group', String(gid)], { encoding: 'utf8' }).stdout.split(':')[0] || String(gid);
  const dir = mkdtempSync(join(tmpdir(), 'helpdesk-dovecot-'));
  for (const sub of ['run', 'state', 'home']) mkdirSync(join(dir, sub));
  const port = await freePort();
  writeFileSync(join(dir, 'users'), Object.entries(users).map(([name, password]) => `${name}:{PLAIN}${password}::::::\n`).join(''));
  writeFileSync(join(dir, 'dovecot.conf'), `
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = ${user}
default_internal_group = ${group}
default_login_user = ${user}
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/users
}
userdb {
  driver = static
  args = uid=${uid} gid=${gid} home=${dir}/home/%u
}
mail_location = maildir:~/Maildir
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
service stats {
  unix_listener stats-reader {
    mode = 0600
  }
  unix_listener stats-writer {
    mode = 0600
  }
}
`);
  if (asRoot) {
    chmodSync(dir, 0o755);
    for (const path of [dir, join(dir, 'run'), join(dir, 'state'), join(dir, 'home'), join(dir, 'users'), join(dir, 'dovecot.conf')]) chownSync(path, uid, gid);
  }
  const command = asRoot ? 'setpriv' : DOVECOT;
  const args = asRoot
    ? ['--reuid', String(uid), '--regid', String(gid), '--clear-groups', DOVECOT, '-F', '-c', join(dir, 'dovecot.conf')]
    : ['-F', '-c', join(dir, 'dovecot.conf')];
  let output = '';
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { output += d.toString(); });
  const log = () => {
    try {
      return output + readFileSync(join(dir, 'dovecot.log'), 'utf8');
    } catch {
      return output;
    }
  };
  await waitForPort(port, child, log);
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  t.teardown(stop);
  return { host: '127.0.0.1', port, users, stop };
}
