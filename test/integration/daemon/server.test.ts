import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { get } from 'node:https';
import { join } from 'node:path';
import type { SecureVersion } from 'node:tls';
import { createTestDatabase } from '../../helpers/db.js';
import { tempDataDir } from '../../helpers/cli.js';
import { loadConfig } from '../../../src/core/config.js';
import { createLogger } from '../../../src/core/logging.js';
import { createDb } from '../../../src/db/connection.js';
import { startServer } from '../../../daemon/server.js';

async function configFor(t: Test) {
  const dataDir = tempDataDir(t);
  const databaseUrl = await createTestDatabase(t);
  return { dataDir, databaseUrl, config: loadConfig({ DATABASE_URL: databaseUrl, HELPDESK_DATA_DIR: dataDir, HELPDESK_SECRET_KEY: 'test-secret-key' }) };
}

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function httpsStatus(url: string, tls: { minVersion: SecureVersion; maxVersion: SecureVersion }): Promise<number> {
  return new Promise((resolve, reject) => {
    // The certificate is self-signed; what is tested is the protocol version the server accepts.
    const req = get(url, { rejectUnauthorized: false, ...tls, ciphers: 'DEFAULT@SECLEVEL=0' }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject);
  });
}

t.test('HTTPS with --tls-cert/--tls-key accepts TLS 1.2 and newer only', { skip: hasOpenssl() ? false : 'openssl is not installed: cannot make a test certificate' }, async (t) => {
  const { dataDir, config } = await configFor(t);
  const cert = join(dataDir, 'cert.pem');
  const key = join(dataDir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-keyout', key, '-out', cert], { stdio: 'ignore' });

  const server = await startServer({
    config, log: createLogger('silent'), port: 0, host: '127.0.0.1', jobs: false, jobsOnly: false,
    tls: { cert: readFileSync(cert), key: readFileSync(key) },
  });
  t.teardown(() => server.close());
  t.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  t.ok(server.bootstrap, 'the first start created the default tenant');

  t.equal(await httpsStatus(`${server.url}/api/v1/healthz`, { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' }), 200, 'TLS 1.2');
  t.equal(await httpsStatus(`${server.url}/api/v1/healthz`, { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' }), 200, 'TLS 1.3');
  await t.rejects(httpsStatus(`${server.url}/api/v1/healthz`, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1' }), 'TLS 1.1 is refused');
});

t.test('--jobs-only runs no HTTP server and creates no tenant; close() is idempotent', async (t) => {
  const { databaseUrl, config } = await configFor(t);
  const server = await startServer({ config, log: createLogger('silent'), port: 0, host: '127.0.0.1', jobs: true, jobsOnly: true });
  t.equal(server.url, null);
  t.equal(server.port, null);
  t.equal(server.bootstrap, null);
  t.equal(server.jobs, true);
  await Promise.all([server.close(), server.close()]);

  const db = createDb(databaseUrl, { max: 1 });
  t.teardown(() => db.destroy());
  t.same(await db('tenants').select('id'), [], 'no tenant without the API');
});

t.test('a failed start (port taken) releases what it had started', async (t) => {
  const { config } = await configFor(t);
  const first = await startServer({ config, log: createLogger('silent'), port: 0, host: '127.0.0.1', jobs: false, jobsOnly: false });
  t.teardown(() => first.close());
  await t.rejects(
    startServer({ config, log: createLogger('silent'), port: first.port!, host: '127.0.0.1', jobs: true, jobsOnly: false }),
    { code: 'EADDRINUSE' },
  );
  // Had the second start leaked its scheduler or pool, this process would not end and tap would time out.
});
