import t from 'tap';
import { testApp, tenantFixture } from '../../helpers/app.js';
import { runCommand, tempDataDir } from '../../helpers/cli.js';
import { emptyMariaDb, osticketDb, osticketMissing } from '../../helpers/osticket.js';
import ImportLegacy from '../../../commands/import/legacy.js';

t.test('helpdesk import legacy', { skip: osticketMissing }, async (t) => {
  const app = await testApp(t);
  const env = { DATABASE_URL: app.databaseUrl, HELPDESK_DATA_DIR: tempDataDir(t), HELPDESK_SECRET_KEY: 'test-secret-key', LOG_LEVEL: 'silent' };
  const tenant = await tenantFixture(app);
  const source = osticketDb(t);

  const dry = await runCommand(ImportLegacy, ['--source', source.dsn, '--tenant', tenant.slug, '--dry-run', '--json'], env);
  t.equal(dry.code, 0, dry.stderr);
  t.match(dry.json(), { dry_run: true, counts: { tickets: 8, customers: 5 }, errors: [] });
  t.equal(Number((await app.deps.db('tickets').where({ tenant_id: tenant.id }).count({ n: '*' }))[0]!.n), 0);

  const text = await runCommand(ImportLegacy, ['--source', source.dsn, '--tenant', tenant.slug], env);
  t.equal(text.code, 0, text.stderr);
  t.match(text.stdout, /^Imported into tenant/);
  t.match(text.stdout, /tickets +8 new +0 already imported/);

  const again = await runCommand(ImportLegacy, ['--source', source.dsn, '--tenant', tenant.slug, '--json'], env);
  t.match(again.json(), { dry_run: false, counts: { tickets: 0, messages: 0 }, skipped: { tickets: 8, attachments: 1 } });

  const empty = emptyMariaDb(t);
  const refused = await runCommand(ImportLegacy, ['--source', empty.dsn, '--tenant', tenant.slug], env);
  t.equal(refused.code, 2);
  t.match(refused.stderr, /Error \(validation_failed\): source Not an osTicket schema/);
});
