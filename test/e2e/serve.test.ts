import t from 'tap';
import { connect } from 'node:net';
import { createTestDatabase } from '../helpers/db.js';
import { cliEnv, halfSentRequest, http, login, printedLogin, runCli, startServe, tempDataDir } from '../helpers/cli.js';

/** Resolves once nothing accepts connections on the port any more (the server began closing). */
async function refused(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const closed = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => { socket.destroy(); resolve(false); });
      socket.once('error', () => resolve(true));
    });
    if (closed) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`port ${port} still accepts connections`);
}

t.test('serve on DATABASE_URL: first-start login, sign-in, graceful SIGTERM, no second login', async (t) => {
  const env = cliEnv({ DATABASE_URL: await createTestDatabase(t), HELPDESK_DATA_DIR: tempDataDir(t) });

  const first = await startServe(t, ['--port', '0'], env);
  t.match(first.url, /^http:\/\/127\.0\.0\.1:\d+$/, 'prints the real port');
  t.notMatch(first.url, /:0$/);
  const admin = printedLogin(first.stdout());
  t.ok(admin, 'the first start prints an administrator login');
  t.match(first.stdout(), /tenant:\s+default/);
  t.match(first.stdout(), /X-Helpdesk-Tenant: default/);

  t.same((await http(`${first.url}/api/v1/healthz`)).body, { status: 'ok' });
  t.equal((await http(`${first.url}/api/v1/readyz`)).status, 200);

  const token = await login(first.url, 'default', admin!.email, admin!.password);
  const me = await http(`${first.url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(me.status, 200);
  t.equal(me.body.email, admin!.email);
  t.equal(me.body.role, 'admin');

  // A request whose body is still arriving when SIGTERM comes must be answered before exit.
  const port = Number(new URL(first.url).port);
  const slow = halfSentRequest(first.url, token);
  await new Promise((resolve) => setTimeout(resolve, 200));
  first.child.kill('SIGTERM');
  await refused(port);
  slow.finish();
  const answered = await slow.answered;
  t.equal(answered.status, 200, 'the in-flight request completed');
  t.equal(answered.body.timezone, 'Europe/Berlin');
  t.equal(await first.exited, 0, 'SIGTERM exits 0');

  const second = await startServe(t, ['--port', '0', '--no-jobs'], env);
  t.equal(printedLogin(second.stdout()), null, 'the login is printed only once');
  t.match(second.stdout(), /job scheduler off/);
  t.equal((await http(`${second.url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } })).status, 200, 'the session survived the restart');
  second.child.kill('SIGINT');
  t.equal(await second.exited, 0, 'SIGINT exits 0');
});

t.test("serve bounds its heap's growth between full collections: HELPDESK_HEAP_GROWING_PERCENT", async (t) => {
  const databaseUrl = await createTestDatabase(t);
  const growthOf = async (settings: Record<string, string>) => {
    const served = await startServe(t, ['--port', '0', '--no-jobs'], cliEnv({ DATABASE_URL: databaseUrl, HELPDESK_DATA_DIR: tempDataDir(t), LOG_LEVEL: 'debug', HELPDESK_LOG_FORMAT: 'json', ...settings }));
    served.child.kill('SIGTERM');
    t.equal(await served.exited, 0);
    const line = served.stdout().split('\n').find((text) => text.includes('heap growth between full collections'));
    return line ? JSON.parse(line).heap_growing_percent : null;
  };
  t.same(await growthOf({}), { percent: 50, source: 'config' }, 'by default, up to one and a half times the live heap');
  t.same(await growthOf({ HELPDESK_HEAP_GROWING_PERCENT: '100' }), { percent: 100, source: 'config' });
  t.same(await growthOf({ HELPDESK_HEAP_GROWING_PERCENT: '0' }), { percent: null, source: 'v8-default' });

  const wrong = await runCli(['serve', '--port', '0'], cliEnv({ DATABASE_URL: databaseUrl, HELPDESK_DATA_DIR: tempDataDir(t), HELPDESK_HEAP_GROWING_PERCENT: 'lots' }));
  t.not(wrong.code, 0);
  t.match(wrong.stderr, 'HELPDESK_HEAP_GROWING_PERCENT must be an integer of at least 0, got "lots"');
});
