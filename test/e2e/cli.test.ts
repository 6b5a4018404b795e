import t from 'tap';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase } from '../helpers/db.js';
import { createDb, withDatabase } from '../../src/db/connection.js';
import { cliEnv, runCli, startServe, tempDataDir } from '../helpers/cli.js';
import { licenseKeys, licensePayload, signLicense } from '../helpers/license.js';

// The `helpdesk` executable in real processes. Detailed command behaviour (rendering, every
// error) is covered in-process by test/integration/cli/; here: exit codes, stdout discipline,
// and the paths that need a process (a fresh database, the REST mode against a running serve).

t.test('migrate: commands refuse a database with pending migrations until it ran', async (t) => {
  const adminUrl = process.env.HELPDESK_TEST_ADMIN_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
  const name = `helpdesk_e2e_${Date.now().toString(36)}${Math.floor(Math.random() * 1e6)}`;
  const admin = createDb(adminUrl, { max: 1 });
  await admin.raw(`create database ${name}`);
  t.teardown(async () => {
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.destroy();
  });
  const env = cliEnv({ DATABASE_URL: withDatabase(adminUrl, name), HELPDESK_DATA_DIR: tempDataDir(t) });

  const refused = await runCli(['tenant', 'list', '--json'], env);
  t.equal(refused.code, 6, 'pending migrations: not_ready');
  t.match(refused.json(), { error: { code: 'not_ready', message: /pending migration.*helpdesk migrate/ } });

  // Every migration of the project, in order, recorded without its extension.
  const all = readdirSync(new URL('../../migrations/', import.meta.url)).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3)).sort();
  t.equal(all[0], '20261122090000_foundation');
  const migrated = await runCli(['migrate', '--json'], env);
  t.equal(migrated.code, 0, migrated.stderr);
  t.same(migrated.json(), { migrated: all });

  const status = await runCli(['migrate', '--status', '--json'], env);
  t.equal(status.code, 0);
  t.same(status.json(), { applied: all, pending: [] });
});

t.test('tenant create, jobs run, and license apply through a running serve', async (t) => {
  const keys = licenseKeys();
  const env = cliEnv({ DATABASE_URL: await createTestDatabase(t), HELPDESK_DATA_DIR: tempDataDir(t), HELPDESK_LICENSE_PUBLIC_KEY: keys.publicKeyRaw });

  const created = await runCli(['tenant', 'create', '--slug', 'acme', '--name', 'Acme Inc.', '--admin-email', 'it@acme.test', '--admin-password', 'a very long password', '--json'], env);
  t.equal(created.code, 0, created.stderr);
  const tenant = created.json();
  t.same(Object.keys(tenant).sort(), ['admin', 'api_key', 'tenant']);
  t.same(Object.keys(tenant.tenant).sort(), ['id', 'name', 'slug']);
  t.same(Object.keys(tenant.admin).sort(), ['email', 'id']);
  t.match(tenant, { tenant: { slug: 'acme', name: 'Acme Inc.' }, admin: { email: 'it@acme.test' }, api_key: /^hdk_/ });

  const duplicate = await runCli(['tenant', 'create', '--slug', 'acme', '--name', 'Again', '--admin-email', 'x@acme.test', '--json'], env);
  t.equal(duplicate.code, 5, 'duplicate slug: exit code 5');
  t.match(duplicate.json(), { error: { code: 'already_exists', message: 'Tenant with slug acme already exists' } });

  const job = await runCli(['jobs', 'run', 'session-cleanup', '--now', '2030-01-01T00:00:00Z', '--json'], env);
  t.equal(job.code, 0, job.stderr);
  t.match(job.json(), { name: 'session-cleanup', status: 'succeeded', simulated_now: '2030-01-01T00:00:00.000Z', result: { tenants: 1 }, error: null });

  const dir = tempDataDir(t);
  const licence = join(dir, 'acme.lic');
  writeFileSync(licence, signLicense(keys.privateKey, licensePayload({ customer: 'Acme Inc.' })) + '\n');
  const served = await startServe(t, ['--port', '0', '--no-jobs'], env);
  const remote = await runCli(['license', 'apply', licence, '--api-url', served.url, '--token', tenant.api_key, '--json'], env);
  t.equal(remote.code, 0, remote.stderr);
  t.match(remote.json(), { edition: 'enterprise', status: 'active', customer: 'Acme Inc.' });

  // HELPDESK_API_URL / HELPDESK_TOKEN select the remote mode too; API errors keep their code.
  const forged = join(dir, 'forged.lic');
  writeFileSync(forged, signLicense(licenseKeys().privateKey, licensePayload()));
  const rejected = await runCli(['license', 'apply', forged, '--json'], { ...env, HELPDESK_API_URL: served.url, HELPDESK_TOKEN: tenant.api_key });
  t.equal(rejected.code, 2, 'a badly signed licence is refused through the API');
  t.match(rejected.json().error, { code: 'validation_failed', details: [{ field: 'license', message: /invalid signature/ }] });
  const badToken = await runCli(['license', 'apply', licence, '--api-url', served.url, '--token', 'hdk_nope_nope'], env);
  t.equal(badToken.code, 4);
  t.match(badToken.stderr, /^Error \(unauthenticated\): /);

  served.child.kill('SIGTERM');
  t.equal(await served.exited, 0);
});
