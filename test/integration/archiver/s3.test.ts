import t from 'tap';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { oldClosedTickets } from '../../helpers/archive-fixture.js';
import { S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, s3Server } from '../../helpers/s3-server.js';
import { runningArchives } from '../../../src/archiver/runs.js';
import { decodeFile } from '../../../src/archiver/parquet.js';

/**
 * The archiver against a real local S3-compatible server (CONTRACT §19: `s3://bucket/prefix` with
 * HELPDESK_ARCHIVE_S3_ENDPOINT): objects under the prefix, read back and verified, archived
 * tickets served from the bucket; credentials from the configuration only, never in an answer.
 */
t.setTimeout(300_000);

t.test('archive to an S3-compatible store and read back from it', async (t) => {
  const { endpoint } = await s3Server(t, 'helpdesk-archive');
  const keys = licenseKeys();
  const env = await testApp(t, {
    licensePublicKey: keys.publicKeyPem, archiveUrl: 's3://helpdesk-archive/cold/tickets', archiveS3Endpoint: endpoint,
    archiveS3AccessKeyId: S3_ACCESS_KEY_ID, archiveS3SecretAccessKey: S3_SECRET_ACCESS_KEY, archiveBatchSize: 2,
  });
  const tenant = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  const customer = await userFixture(env, tenant.id, 'customer');
  const old = await oldClosedTickets(env, tenant, customer.id, 3);

  let res = await call(env, 'POST', '/ticket-archiver/run', { token: tenant.admin.token, body: { older_than_days: 30 } });
  t.equal(res.statusCode, 202);
  const runId = res.json().run_id;
  await runningArchives();
  res = await call(env, 'GET', '/ticket-archiver/status', { token: tenant.admin.token });
  t.match(res.json(), { archived_tickets: 3, last_run: { run_id: runId, status: 'completed', tickets: 3, files: 8, error: null } });
  t.notMatch(res.body, new RegExp(`${S3_SECRET_ACCESS_KEY}|${S3_ACCESS_KEY_ID}`), 'no credentials in the status');

  // The objects, seen by an independent client.
  const client = new S3Client({
    region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: S3_ACCESS_KEY_ID, secretAccessKey: S3_SECRET_ACCESS_KEY },
    requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
  });
  t.teardown(() => client.destroy());
  const listed = await client.send(new ListObjectsV2Command({ Bucket: 'helpdesk-archive' }));
  const objectKeys = (listed.Contents ?? []).map((o) => o.Key!).sort();
  t.equal(objectKeys.length, 8, 'two batches of four files');
  for (const key of objectKeys) t.match(key, new RegExp(`^cold/tickets/${tenant.id}/${runId}/[0-9a-f-]{36}/(tickets|messages|events|attachments)\\.parquet$`));
  const ticketsKey = objectKeys.find((k) => k.endsWith('tickets.parquet'))!;
  const object = await client.send(new GetObjectCommand({ Bucket: 'helpdesk-archive', Key: ticketsKey }));
  const rows = await decodeFile(await object.Body!.transformToByteArray());
  t.ok(rows.length >= 1 && rows.every((r) => old.some((o) => o.id === r.id)));

  // Served from the bucket.
  for (const ticket of old) {
    res = await call(env, 'GET', `/tickets/${ticket.id}`, { token: customer.token });
    t.equal(res.statusCode, 200);
    t.match(res.json(), { id: ticket.id, archived: true, subject: ticket.subject });
    t.equal(res.json().messages.length, 2, 'the public ones');
  }
  t.equal((await env.deps.db('tickets').where({ tenant_id: tenant.id }).whereIn('id', old.map((o) => o.id))).length, 0);
});

t.test('a store that refuses the credentials fails the run, keeps the tickets and never shows the secret', async (t) => {
  const { endpoint } = await s3Server(t, 'helpdesk-archive');
  const keys = licenseKeys();
  const secret = 'wrong-secret-value-123';
  const env = await testApp(t, {
    licensePublicKey: keys.publicKeyPem, archiveUrl: 's3://helpdesk-archive', archiveS3Endpoint: endpoint,
    // (s3rver checks the key id of a SigV4 request, not its signature: the id is what it refuses.)
    archiveS3AccessKeyId: 'NOT-A-KNOWN-KEY', archiveS3SecretAccessKey: secret,
  });
  const tenant = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  const customer = await userFixture(env, tenant.id, 'customer');
  const old = await oldClosedTickets(env, tenant, customer.id, 1);
  t.equal((await call(env, 'POST', '/ticket-archiver/run', { token: tenant.admin.token, body: {} })).statusCode, 202);
  await runningArchives();
  const res = await call(env, 'GET', '/ticket-archiver/status', { token: tenant.admin.token });
  t.match(res.json(), { archived_tickets: 0, last_run: { status: 'failed', tickets: 0 } });
  t.match(res.json().last_run.error, /Access Key Id/);
  t.notMatch(res.body, secret);
  t.equal((await env.deps.db('tickets').where({ tenant_id: tenant.id, id: old[0]!.id })).length, 1, 'still hot');
  t.equal((await call(env, 'GET', `/tickets/${old[0]!.id}`, { token: tenant.admin.token })).json().archived, undefined);
});
