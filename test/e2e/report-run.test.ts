import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase } from '../helpers/db.js';
import { createDb } from '../../src/db/connection.js';
import { uuidv7 } from '../../src/core/ids.js';
import { cliEnv, runCli, startServe, tempDataDir } from '../helpers/cli.js';
import { licenseKeys, licensePayload, signLicense } from '../helpers/license.js';

/**
 * `helpdesk report run KEY --from --to [--format csv]` in real processes: locally (with the
 * Enterprise gate), as CSV on stdout, as --json, and through a running serve with --api-url.
 */
t.setTimeout(240_000);

t.test('report run: table, CSV and JSON, locally and through the API', async (t) => {
  const keys = licenseKeys();
  const databaseUrl = await createTestDatabase(t);
  const env = cliEnv({ DATABASE_URL: databaseUrl, HELPDESK_DATA_DIR: tempDataDir(t), HELPDESK_LICENSE_PUBLIC_KEY: keys.publicKeyRaw });
  const created = await runCli(['tenant', 'create', '--slug', 'acme', '--name', 'Acme', '--admin-email', 'it@acme.test', '--json'], env);
  t.equal(created.code, 0, created.stderr);
  const tenant = created.json();
  const window = ['--from', '2026-11-01T00:00:00Z', '--to', '2026-11-03T00:00:00Z', '--tz', 'UTC'];

  const community = await runCli(['report', 'run', 'tickets_created', ...window, '--tenant', 'acme', '--json'], env);
  t.not(community.code, 0);
  t.match(community.json(), { error: { code: 'feature_not_licensed', details: { feature: 'reporting' } } });

  const licence = join(tempDataDir(t), 'acme.lic');
  writeFileSync(licence, signLicense(keys.privateKey, licensePayload()));
  t.equal((await runCli(['license', 'apply', licence, '--tenant', 'acme', '--json'], env)).code, 0);

  // Three tickets: two on 1 November (one resolved after an hour), one on 2 November.
  const db = createDb(databaseUrl, { max: 1 });
  t.teardown(() => db.destroy());
  const tenantId = tenant.tenant.id as string;
  const status = await db('statuses').where({ tenant_id: tenantId, key: 'open' }).first('id');
  const priority = await db('priorities').where({ tenant_id: tenantId, key: 'normal' }).first('id');
  const ticket = (n: number, createdAt: string, resolvedAt: string | null = null) => ({
    tenant_id: tenantId, id: uuidv7(), ticket_number: n, subject: 'x', status_id: status.id, priority_id: priority.id,
    requester_id: tenant.admin.id, channel: 'email', created_at: createdAt, updated_at: createdAt, resolved_at: resolvedAt,
  });
  await db('tickets').insert([
    ticket(1, '2026-11-01T08:00:00Z', '2026-11-01T09:00:00Z'), ticket(2, '2026-11-01T10:00:00Z'), ticket(3, '2026-11-02T10:00:00Z'),
  ]);

  const csv = await runCli(['report', 'run', 'tickets_created', ...window, '--format', 'csv', '--tenant', 'acme'], env);
  t.equal(csv.code, 0, csv.stderr);
  t.equal(csv.stdout, [
    'day,created,first_responded,avg_first_response_time_seconds,resolved,avg_resolution_time_seconds,reopened',
    '2026-11-01T00:00:00.000Z,2,0,,1,3600,0',
    '2026-11-02T00:00:00.000Z,1,0,,0,,0',
    '',
  ].join('\n'));

  const json = await runCli(['report', 'run', 'tickets_created', ...window, '--group-by', 'ticket', '--tenant', 'acme', '--json'], env);
  t.equal(json.code, 0, json.stderr);
  t.same(json.json().rows.map((r: unknown[]) => r[0]), [1, 2, 3]);

  const table = await runCli(['report', 'run', 'tickets_resolved', ...window, '--tenant', 'acme'], env);
  t.equal(table.code, 0, table.stderr);
  t.match(table.stdout, /2026-11-01T00:00:00\.000Z\t1\t3600/);

  const bad = await runCli(['report', 'run', 'tickets_created', '--group-by', 'score', '--tenant', 'acme', '--json'], env);
  t.match(bad.json(), { error: { code: 'validation_failed', details: [{ field: 'group_by' }] } });

  const served = await startServe(t, ['--port', '0', '--no-jobs'], env);
  const remote = await runCli(['report', 'run', 'tickets_created', ...window, '--format', 'csv', '--api-url', served.url, '--token', tenant.api_key], env);
  t.equal(remote.code, 0, remote.stderr);
  t.equal(remote.stdout, csv.stdout, 'the same CSV through the API');
});
