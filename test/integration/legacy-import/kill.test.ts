import t from 'tap';
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { testApp, tenantFixture } from '../../helpers/app.js';
import { tempDataDir } from '../../helpers/cli.js';
import { addSyntheticTickets, osticketDb, osticketMissing } from '../../helpers/osticket.js';

// kill -9 of a real `helpdesk import legacy` half-way, then the same command again: every ticket and
// thread entry exactly once.
const BIN = new URL('../../../bin/dev.js', import.meta.url).pathname;

t.test('an import killed with SIGKILL completes on the next run, without duplicates', { skip: osticketMissing }, async (t) => {
  const app = await testApp(t);
  const tenant = await tenantFixture(app);
  const source = osticketDb(t);
  addSyntheticTickets(source, 3000);
  const env = { ...process.env, DATABASE_URL: app.databaseUrl, HELPDESK_DATA_DIR: tempDataDir(t), HELPDESK_SECRET_KEY: 'test-secret-key', LOG_LEVEL: 'silent' };
  const db = app.deps.db;
  const count = async (table: string) => Number((await db(table).where({ tenant_id: tenant.id }).count({ n: '*' }))[0]!.n);
  const args = [BIN, 'import', 'legacy', '--source', source.dsn, '--tenant', tenant.slug, '--json'];

  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { env, stdio: 'ignore' });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const deadline = Date.now() + 120_000;
  while ((await count('tickets')) < 1000 && Date.now() < deadline) await sleep(50);
  child.kill('SIGKILL');
  await exited;
  const ticketsAtKill = await count('tickets');
  t.ok(ticketsAtKill > 0 && ticketsAtKill < 3008, `killed half-way (${ticketsAtKill} tickets)`);

  const again = spawn(process.execPath, ['--import', 'tsx', ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  again.stdout.on('data', (chunk) => { out += chunk; });
  const code = await new Promise((resolve) => again.on('exit', resolve));
  t.equal(code, 0);
  const result = JSON.parse(out);
  t.same(result.errors, []);
  t.equal(result.counts.tickets + result.skipped.tickets, 3008);
  t.equal(await count('tickets'), 3008, 'every ticket once');
  t.equal(await count('messages'), 21 + 15000, 'every thread entry once');
  t.equal(Number((await db('events').where({ tenant_id: tenant.id, type: 'ticket.imported' }).count({ n: '*' }))[0]!.n), 3008, 'one imported event per ticket');
});
