import t from 'tap';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { call, testApp } from '../../helpers/app.js';

/**
 * The OpenAPI document as a product, checked with tools nobody here wrote:
 * - Redocly CLI (pinned in devDependencies) lints it with the project's redocly.yaml (the
 *   recommended rules, no ignore file): any error or warning fails;
 * - openapi-typescript (pinned) generates a TypeScript client from it, and a small integrator's
 *   program (test/fixtures/openapi-client/usage.ts: sign in, list users, read an error body) must
 *   type-check against that client with the project's TypeScript.
 * Both run on the document a freshly built app serves, so a route added later is checked too.
 */
const require = createRequire(import.meta.url);
const ROOT = new URL('../../../', import.meta.url).pathname;

/** The executable a package declares in its package.json `bin`. */
function binOf(pkg: string, name: string): string {
  const manifest = require.resolve(`${pkg}/package.json`);
  const bin = JSON.parse(readFileSync(manifest, 'utf8')).bin as Record<string, string>;
  return join(dirname(manifest), bin[name]!);
}

t.test('the document passes Redocly and yields a client that type-checks', async (t) => {
  const env = await testApp(t);
  const response = await call(env, 'GET', '/openapi.json');
  t.equal(response.statusCode, 200);
  const dir = mkdtempSync(join(tmpdir(), 'helpdesk-openapi-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const documentFile = join(dir, 'openapi.json');
  writeFileSync(documentFile, response.body);

  await t.test('Redocly recommended rules: no error, no warning', async (t) => {
    // The project's configuration (the recommended rules, nothing switched off), as `npm run openapi:lint` uses it.
    const config = join(ROOT, 'redocly.yaml');
    const lint = spawnSync(process.execPath, [binOf('@redocly/cli', 'redocly'), 'lint', '--config', config, '--format', 'json', documentFile], {
      cwd: dir,
      encoding: 'utf8',
      // No telemetry and no update check: the test runs offline and must not phone home.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      timeout: 60_000,
    });
    const start = lint.stdout.indexOf('{');
    t.ok(start >= 0, 'redocly printed its report', { stderr: lint.stderr });
    const report = JSON.parse(lint.stdout.slice(start)) as {
      totals: { errors: number; warnings: number; ignored: number };
      problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
    };
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    t.same(problems, [], 'no problems');
    t.same(report.totals, { errors: 0, warnings: 0, ignored: 0 });
  });

  await t.test('openapi-typescript generates a client the usage example type-checks against', async (t) => {
    const client = astToString(await openapiTS(JSON.parse(response.body)));
    writeFileSync(join(dir, 'api.d.ts'), client);
    copyFileSync(join(ROOT, 'test/fixtures/openapi-client/usage.ts'), join(dir, 'usage.ts'));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext',
        types: ['node'], typeRoots: [join(ROOT, 'node_modules/@types')], skipLibCheck: false,
      },
      files: ['usage.ts', 'api.d.ts'],
    }));
    const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')], {
      cwd: dir, encoding: 'utf8', timeout: 120_000,
    });
    t.equal(tsc.status, 0, `tsc accepts the usage against the generated client\n${tsc.stdout}${tsc.stderr}`);
    t.match(client, /"users\.list": \{/, 'operations are named by operationId');
    t.match(client, /Error: \{/, 'the error body is a named type');
  });
});
