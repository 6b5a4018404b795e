import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { testApp } from '../../helpers/app.js';
import { runCommand, tempDataDir } from '../../helpers/cli.js';
import { licenseKeys, licensePayload, signLicense } from '../../helpers/license.js';
import TenantCreate from '../../../commands/tenant/create.js';
import TenantList from '../../../commands/tenant/list.js';
import UserCreate from '../../../commands/user/create.js';
import JobsRun from '../../../commands/jobs/run.js';
import JobsList from '../../../commands/jobs/list.js';
import LicenseApply from '../../../commands/license/apply.js';
import Migrate from '../../../commands/migrate.js';

// The commands in-process against a real database: rendering, error output and exit codes.
// test/e2e/ runs the same executable in real processes.
t.test('CLI commands', async (t) => {
  const keys = licenseKeys();
  const app = await testApp(t);
  const env = { DATABASE_URL: app.databaseUrl, HELPDESK_DATA_DIR: tempDataDir(t), HELPDESK_SECRET_KEY: 'test-secret-key', LOG_LEVEL: 'silent', HELPDESK_LICENSE_PUBLIC_KEY: keys.publicKeyPem };
  const db = app.deps.db;

  await t.test('tenant create and list, text and JSON', async (t) => {
    const text = await runCommand(TenantCreate, ['--slug', 'acme', '--name', 'Acme Inc.', '--admin-email', 'it@acme.test'], env);
    t.equal(text.code, 0, text.stderr);
    t.match(text.stdout, /^Created tenant acme \(/);
    t.match(text.stdout, /password: +\S+ +\(generated, shown only once\)/);
    t.match(text.stdout, /API key: +hdk_\S+/);
    const audit = await db('audit_log').comment('cross-tenant: test inspection').where({ action: 'tenant.created' }).first('actor_type');
    t.equal(audit.actor_type, 'cli', 'audited as the CLI operator');

    const json = await runCommand(TenantCreate, ['--slug', 'beta', '--name', 'Beta', '--admin-email', 'it@beta.test', '--admin-password', 'a very long password', '--json'], env);
    t.same(Object.keys(json.json()).sort(), ['admin', 'api_key', 'tenant'], 'no admin_password when one was given');

    const list = await runCommand(TenantList, ['--json'], env);
    t.match(list.json(), [{ slug: 'acme', name: 'Acme Inc.' }, { slug: 'beta', name: 'Beta' }]);
    const listText = await runCommand(TenantList, [], env);
    t.match(listText.stdout, /^acme +Acme Inc\./m);
  });

  await t.test('errors: one line on stderr, or one JSON document on stdout, and the exit code', async (t) => {
    const before = await db('tenants').count<{ count: string }[]>('* as count');
    const duplicate = await runCommand(TenantCreate, ['--slug', 'acme', '--name', 'Again', '--admin-email', 'x@acme.test'], env);
    t.equal(duplicate.code, 5);
    t.equal(duplicate.stdout, '');
    t.equal(duplicate.stderr, 'Error (already_exists): Tenant with slug acme already exists\n');

    const invalid = await runCommand(TenantCreate, ['--slug', 'Bad Slug!', '--name', ' ', '--admin-email', 'nope', '--json'], env);
    t.equal(invalid.code, 2);
    t.equal(invalid.stderr, '');
    t.same(invalid.json().error.details.map((d: { field: string }) => d.field).sort(), ['admin_email', 'name', 'slug'], 'one detail per problem');

    const missing = await runCommand(TenantCreate, ['--json'], env);
    t.equal(missing.code, 2);
    t.match(missing.json().error, { code: 'validation_failed', message: /Missing required flag/ });
    const unknownFlag = await runCommand(TenantList, ['--bogus'], env);
    t.equal(unknownFlag.code, 2);
    t.match(unknownFlag.stderr, /^Error \(validation_failed\): /);
    const after = await db('tenants').count<{ count: string }[]>('* as count');
    t.equal(after[0]!.count, before[0]!.count, 'refused commands wrote nothing');
  });

  await t.test('user create', async (t) => {
    const user = await runCommand(UserCreate, ['--tenant', 'acme', '--email', 'ann@acme.test', '--name', 'Ann Agent', '--password', 'a very long password', '--json'], env);
    t.equal(user.code, 0, user.stderr);
    t.match(user.json(), { email: 'ann@acme.test', name: 'Ann Agent', role: 'agent', active: true });
    const customer = await runCommand(UserCreate, ['--tenant', 'acme', '--email', 'cy@example.com', '--name', 'Cy', '--role', 'customer'], env);
    t.match(customer.stdout, /^Created customer Cy <cy@example.com>/);

    const noTenant = await runCommand(UserCreate, ['--tenant', 'nope', '--email', 'a@b.test', '--name', 'A', '--json'], env);
    t.equal(noTenant.code, 3);
    t.match(noTenant.json().error, { code: 'tenant_not_found', message: 'Tenant nope does not exist' });
    const taken = await runCommand(UserCreate, ['--tenant', 'acme', '--email', 'ANN@acme.test', '--name', 'Ann 2', '--json'], env);
    t.equal(taken.code, 5);
    t.equal(taken.json().error.code, 'already_exists');
    const bad = await runCommand(UserCreate, ['--tenant', 'acme', '--email', 'nope', '--name', ' ', '--password', 'short', '--json'], env);
    t.equal(bad.code, 2);
    t.same(bad.json().error.details.map((d: { field: string }) => d.field), ['email', 'name', 'password']);
    const badRole = await runCommand(UserCreate, ['--tenant', 'acme', '--email', 'x@acme.test', '--name', 'X', '--role', 'owner', '--json'], env);
    t.equal(badRole.code, 2);
    const users = await db('users').comment('cross-tenant: test inspection').whereIn('email', ['nope', 'x@acme.test']);
    t.same(users, [], 'refused users were not created');
  });

  await t.test('jobs list and run', async (t) => {
    const list = await runCommand(JobsList, ['--json'], env);
    t.match(list.json(), [{ name: 'session-cleanup', schedule: '1h', description: String }, { name: 'routing-time-trigger', schedule: '1m', description: String }]);
    const run = await runCommand(JobsRun, ['session-cleanup', '--now', '2030-01-01T01:00:00+01:00', '--json'], env);
    t.equal(run.code, 0, run.stderr);
    t.match(run.json(), { name: 'session-cleanup', status: 'succeeded', simulated_now: '2030-01-01T00:00:00.000Z', result: { tenants: 2 } });
    const row = await db('job_runs').where({ id: run.json().id }).first();
    t.equal(row.status, 'succeeded');
    const text = await runCommand(JobsRun, ['session-cleanup'], env);
    t.match(text.stdout, /^Job session-cleanup: succeeded\n/);

    const unknown = await runCommand(JobsRun, ['nope', '--json'], env);
    t.equal(unknown.code, 3);
    t.match(unknown.json().error, { code: 'resource_not_found', details: { known_jobs: ['session-cleanup', 'routing-time-trigger'] } });
    const badNow = await runCommand(JobsRun, ['session-cleanup', '--now', 'tomorrow', '--json'], env);
    t.equal(badNow.code, 2);
    t.same(badNow.json().error.details, [{ field: 'now', message: 'must be an RFC 3339 timestamp, e.g. 2030-01-01T00:00:00Z' }]);
  });

  await t.test('license apply, local mode', async (t) => {
    const dir = tempDataDir(t);
    const file = join(dir, 'acme.lic');
    writeFileSync(file, signLicense(keys.privateKey, licensePayload({ customer: 'Acme Inc.', modules: ['meetings'] })) + '\n');
    const applied = await runCommand(LicenseApply, [file, '--tenant', 'acme', '--json'], env);
    t.equal(applied.code, 0, applied.stderr);
    t.match(applied.json(), { edition: 'enterprise', status: 'active', customer: 'Acme Inc.', modules: ['meetings'], features: { meetings: true } });

    const forged = join(dir, 'forged.lic');
    writeFileSync(forged, signLicense(licenseKeys().privateKey, licensePayload()));
    const refused = await runCommand(LicenseApply, [forged, '--tenant', 'acme', '--json'], env);
    t.equal(refused.code, 2);
    t.match(refused.json().error.details, [{ field: 'license', message: /invalid signature/ }]);
    const noTenant = await runCommand(LicenseApply, [file, '--json'], env);
    t.equal(noTenant.code, 2);
    t.same(noTenant.json().error.details, [{ field: 'tenant', message: 'is required without --api-url' }]);
    const noFile = await runCommand(LicenseApply, [join(dir, 'missing.lic'), '--tenant', 'acme', '--json'], env);
    t.equal(noFile.code, 2);
    t.equal(noFile.json().error.details[0].field, 'file');
    const noToken = await runCommand(LicenseApply, [file, '--api-url', 'http://127.0.0.1:9', '--json'], env);
    t.equal(noToken.code, 2);
    t.equal(noToken.json().error.details[0].field, 'token');
    const unreachable = await runCommand(LicenseApply, [file, '--api-url', 'http://127.0.0.1:9', '--token', 'hdk_x', '--json'], env);
    t.equal(unreachable.code, 6);
    t.equal(unreachable.json().error.code, 'not_ready');
    const installed = await db('licenses').comment('cross-tenant: test inspection').count<{ count: string }[]>('* as count');
    t.equal(Number(installed[0]!.count), 1, 'only the valid licence was installed');
  });

  await t.test('migrate --status on an up-to-date database', async (t) => {
    const status = await runCommand(Migrate, ['--status', '--json'], env);
    t.equal(status.code, 0);
    t.same(status.json().pending, []);
    t.ok(status.json().applied.length >= 1);
  });
});
