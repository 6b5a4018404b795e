import t from 'tap';
import { createTestDatabase } from '../helpers/db.js';
import { cliEnv, hasTerminal, http, runCli, startServe, tempDataDir } from '../helpers/cli.js';

// What a person at a terminal sees, on a real pseudo-terminal: tables with a header row from the
// list commands, one human line per log entry from serve. Pipes keep the plain lines and JSON logs
// that scripts and log shippers read.

const skip = hasTerminal() ? false : '`script` (util-linux) is not installed: no pseudo-terminal to test on';
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
const plain = (text: string) => text.replace(ANSI, '').replace(/\r/g, '');

t.test('list commands: a table with a header row on a terminal, plain lines on a pipe', { skip }, async (t) => {
  const env = cliEnv({ DATABASE_URL: await createTestDatabase(t), HELPDESK_DATA_DIR: tempDataDir(t) });
  const created = await runCli(['tenant', 'create', '--slug', 'acme', '--name', 'Acme Corp', '--admin-email', 'boss@acme.test', '--json'], env);
  t.equal(created.code, 0, created.stderr);
  const id = created.json().tenant.id;

  const onTerminal = await runCli(['tenant', 'list'], env, { terminal: true });
  t.equal(onTerminal.code, 0, onTerminal.stdout);
  const lines = plain(onTerminal.stdout).split('\n').filter((line) => line.trim());
  t.match(lines[0], /^SLUG\s+NAME\s+ID\s+CREATED\s*$/, 'a header row first');
  t.match(onTerminal.stdout, /\x1b\[1mSLUG\x1b\[22m/, 'in bold');
  t.match(lines[1], new RegExp(`^acme\\s+Acme Corp\\s+${id}\\s+\\d{4}-\\d\\d-\\d\\dT`), 'then one aligned row per tenant');
  t.equal(lines[0]!.indexOf('NAME'), lines[1]!.indexOf('Acme Corp'), 'columns line up');
  t.notMatch(onTerminal.stdout, /\x1b\[2J/, 'the screen is never cleared');

  const piped = await runCli(['tenant', 'list'], env);
  t.equal(piped.code, 0, piped.stderr);
  t.notMatch(piped.stdout, /SLUG/, 'no header on a pipe');
  t.match(piped.stdout, new RegExp(`^acme\\s+Acme Corp\\s+${id}  \\S+\\n$`), 'one plain line per tenant, as before');

  const json = await runCli(['tenant', 'list', '--json'], env, { terminal: true });
  t.match(JSON.parse(plain(json.stdout)), [{ slug: 'acme' }], '--json prints only the JSON, even on a terminal');

  const jobs = await runCli(['jobs', 'list'], env, { terminal: true });
  const jobLines = plain(jobs.stdout).split('\n').filter((line) => line.trim());
  t.match(jobLines[0], /^NAME\s+EVERY\s+DESCRIPTION\s*$/);
  t.match(jobLines[1], /^session-cleanup\s+1h\s+Purges/);
});

t.test('serve logs: human lines on a terminal, JSON on a pipe, HELPDESK_LOG_FORMAT overrides', { skip }, async (t) => {
  // Five daemons at once (each on its own database: each first start creates a tenant).
  const serveWith = async (settings: Record<string, string>, terminal: boolean, request: boolean) => {
    const env = cliEnv({ DATABASE_URL: await createTestDatabase(t), HELPDESK_DATA_DIR: tempDataDir(t), LOG_LEVEL: 'info', ...settings });
    const served = await startServe(t, ['--port', '0', '--no-jobs'], env, { terminal });
    if (request) {
      t.equal((await http(`${served.url}/api/v1/healthz`)).status, 200);
      await waitFor(() => /request completed/.test(served.stdout()));
    }
    served.child.kill('SIGTERM');
    t.equal(await served.exited, 0, 'SIGTERM stops it cleanly');
    return served.stdout();
  };
  const [onTerminal, noColor, piped, forcedJson, forcedPretty] = await Promise.all([
    serveWith({}, true, true),
    serveWith({ NO_COLOR: '1' }, true, false),
    serveWith({}, false, true),
    serveWith({ HELPDESK_LOG_FORMAT: 'json' }, true, false),
    serveWith({ HELPDESK_LOG_FORMAT: 'pretty' }, false, false),
  ]);

  const pretty = plain(onTerminal);
  t.match(
    pretty,
    /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: incoming request GET \/api\/v1\/healthz \{"reqId":"([^"]+)"\}\n\[[\d:.]+\] INFO: request completed 200 [\d.]+ ms \{"reqId":"\1"\}$/m,
    'human lines per request: time, level, method and URL, then status and duration',
  );
  t.match(pretty, /^\[[\d:.]+\] INFO: Server listening at http:\/\/127\.0\.0\.1:\d+$/m);
  t.notMatch(pretty, /"level":/, 'no JSON lines');
  t.match(onTerminal, /\x1b\[32mINFO\x1b\[39m/, 'levels in colour');

  t.match(plain(noColor), /^\[[\d:.]+\] INFO: Server listening at /m);
  t.notMatch(noColor, /\x1b\[3\dm/, 'NO_COLOR is respected');

  const logLines = piped.split('\n').filter((line) => line.startsWith('{'));
  t.ok(logLines.length >= 2, 'JSON lines on a pipe');
  t.match(JSON.parse(logLines.find((line) => line.includes('request completed'))!), { level: 30, msg: 'request completed', res: { statusCode: 200 } });

  t.match(plain(forcedJson), /^\{"level":30,.*"msg":"Server listening at /m, 'HELPDESK_LOG_FORMAT=json on a terminal');
  t.match(forcedPretty, /^\[[\d:.]+\] INFO: Server listening at /m, 'HELPDESK_LOG_FORMAT=pretty on a pipe');
  t.notMatch(forcedPretty, ANSI, 'without colours, which a pipe would keep as garbage');

  const wrong = await runCli(['serve', '--port', '0'], cliEnv({ HELPDESK_DATA_DIR: tempDataDir(t), HELPDESK_LOG_FORMAT: 'xml' }));
  t.equal(wrong.code, 1);
  t.match(wrong.stderr, 'HELPDESK_LOG_FORMAT must be json or pretty, got "xml"');
});

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
