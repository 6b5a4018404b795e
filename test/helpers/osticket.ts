import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Test } from 'tap';

/**
 * A private osTicket database for one test file: the v1.18.1 schema and sample of
 * ../shared/data/osticket loaded into the local MariaDB under a unique name, dropped in teardown.
 */
// The shared data sits next to the checkout (worktrees are one level deeper than the main one).
const DATA = process.env.HELPDESK_OSTICKET_DATA ?? ['../../../shared/data/osticket/', '../../../../shared/data/osticket/']
  .map((rel) => new URL(rel, import.meta.url).pathname).find((dir) => existsSync(dir)) ?? 'shared/data/osticket (set HELPDESK_OSTICKET_DATA)';
const HOST = process.env.HELPDESK_TEST_MARIADB_HOST ?? '127.0.0.1';
const PORT = process.env.HELPDESK_TEST_MARIADB_PORT ?? '3306';

function client(args: string[], input?: string): string {
  return execFileSync('mariadb', ['-h', HOST, '-P', PORT, '-u', 'root', ...args], { input, encoding: 'utf8' });
}

export interface OsticketDb { name: string; dsn: string; sql(statement: string): string }

export function osticketDb(t: Test, options: { seed?: boolean } = {}): OsticketDb {
  const name = `hd_ost_${process.pid}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6)}`;
  execFileSync(`${DATA}/load-into-mariadb.sh`, [name, '-h', HOST, '-P', PORT, '-u', 'root'], {
    env: { ...process.env, SEED: options.seed === false ? '0' : '1' }, stdio: 'ignore',
  });
  t.teardown(() => {
    client(['-e', `DROP DATABASE IF EXISTS \`${name}\``]);
  });
  return {
    name,
    dsn: `mysql://root@${HOST}:${PORT}/${name}`,
    sql: (statement) => client(['-N', name], statement),
  };
}

/** An empty MariaDB database (a source that is not osTicket). */
export function emptyMariaDb(t: Test): { name: string; dsn: string } {
  const name = `hd_notost_${process.pid}_${Date.now().toString(36)}`;
  client(['-e', `CREATE DATABASE \`${name}\`; CREATE TABLE \`${name}\`.widgets (id int primary key)`]);
  t.teardown(() => {
    client(['-e', `DROP DATABASE IF EXISTS \`${name}\``]);
  });
  return { name, dsn: `mysql://root@${HOST}:${PORT}/${name}` };
}
