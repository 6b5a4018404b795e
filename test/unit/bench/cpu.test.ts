import t from 'tap';
import { isLocalDatabase } from '../../../bench/suite/cpu.js';

// The suite reads the database server's CPU from /proc only when the server is on this machine.
t.test('a database on loopback or behind a Unix socket is local; any other host is not', async (t) => {
  t.ok(isLocalDatabase('postgres://root@127.0.0.1:5432/postgres'));
  t.ok(isLocalDatabase('postgres://root@localhost/postgres'));
  t.ok(isLocalDatabase('postgres://root@[::1]:5432/postgres'));
  t.ok(isLocalDatabase('postgres://root@%2Fvar%2Frun%2Fpostgresql:5432/postgres'), 'a socket directory');
  t.notOk(isLocalDatabase('postgres://root@db.example.com:5432/postgres'));
  t.notOk(isLocalDatabase('postgres://root@10.0.0.7/postgres'));
});
