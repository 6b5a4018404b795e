import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Test } from 'tap';

/**
 * A private osTicket database for one test file: the v1.18.1 schema and sample of
 * ../shared/data/osticket loaded into the local MariaDB under a unique name, dropped in teardown.
 */
// The osTicket sample data sits beside the checkout (or one level further up), else HELPDESK_OSTICKET_DATA.
const DATA = process.env.HELPDESK_OSTICKET_DATA ?? ['../../../shared/data/osticket/', '../../../../shared/data/osticket/']
  .map((rel) => new URL(rel, import.meta.url).pathname).find((dir) => existsSync(dir)) ?? 'shared/data/osticket';
/**
 * Why the osTicket tests cannot run here (false when they can): they need the shared sample data
 * (it is not ours to redistribute, so it is not committed) and the MariaDB client.
 */
export const osticketMissing: string | false = !existsSync(DATA)
  ? `the osTicket sample data is not at ${DATA}: set HELPDESK_OSTICKET_DATA`
  : false;
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

/** Adds `tickets` synthetic tickets (ids from 1001) with five thread entries each to a sample database. */
export function addSyntheticTickets(db: OsticketDb, tickets: number): void {
  const users = Math.max(10, Math.floor(tickets / 100));
  db.sql(`SET SESSION sql_mode='';
    INSERT INTO ost_user (id, org_id, default_email_id, status, name, created, updated)
      SELECT 1000 + seq, 0, 1000 + seq, 0, CONCAT('Synthetic User ', seq), '2024-01-01 10:00:00', '2024-01-01 10:00:00' FROM seq_1_to_${users};
    INSERT INTO ost_user_email (id, user_id, flags, address)
      SELECT 1000 + seq, 1000 + seq, 0, CONCAT('synthetic', seq, '@synthetic.example') FROM seq_1_to_${users};
    INSERT INTO ost_ticket (ticket_id, number, user_id, status_id, dept_id, sla_id, topic_id, staff_id, team_id, source, created, updated, lastupdate)
      SELECT 1000 + seq, 1000000 + seq, 1001 + (seq MOD ${users}), 1, 1, 1, 1, 0, 0, 'Web',
             '2024-01-02 10:00:00' + INTERVAL seq MINUTE, '2024-01-03 10:00:00', '2024-01-03 10:00:00' FROM seq_1_to_${tickets};
    INSERT INTO ost_ticket__cdata (ticket_id, subject, priority) SELECT 1000 + seq, CONCAT('Synthetic ticket ', seq), 2 FROM seq_1_to_${tickets};
    INSERT INTO ost_thread (id, object_id, object_type, created)
      SELECT 1000 + seq, 1000 + seq, 'T', '2024-01-02 10:00:00' FROM seq_1_to_${tickets};
    INSERT INTO ost_thread_entry (id, pid, thread_id, staff_id, user_id, type, flags, poster, body, format, created, updated)
      SELECT 1000 + seq, 0, 1000 + ((seq - 1) DIV 5) + 1, IF((seq MOD 5) IN (2, 4), 2, 0),
             IF((seq MOD 5) IN (2, 4), 0, 1001 + (((seq - 1) DIV 5 + 1) MOD ${users})),
             ELT(1 + (seq MOD 5), 'N', 'M', 'R', 'M', 'R'), 0, 'Synthetic poster', CONCAT('<p>Entry ', seq, '</p>'), 'html',
             '2024-01-02 10:00:00' + INTERVAL seq SECOND, '0000-00-00 00:00:00' FROM seq_1_to_${tickets * 5};`);
}
