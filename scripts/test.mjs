#!/usr/bin/env node
// The test command (`npm test`): checks the declared dependencies, builds, finds a PostgreSQL server (HELPDESK_TEST_DATABASE_URL,
// else the local one on 127.0.0.1:5432, else an embedded one started for this run), migrates a
// template database once, and runs tap. Each test file clones its own database from the template,
// so files run in parallel and never see each other's rows.
import { spawnSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, readdirSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

const root = new URL('..', import.meta.url).pathname;
process.chdir(root);

// Dependency hygiene first (knip.jsonc): a package imported but not declared, or declared but
// never used, fails the run.
console.log('# checking declared dependencies (knip)');
const hygiene = spawnSync('npx', ['knip', '--dependencies'], { stdio: 'inherit' });
if (hygiene.status !== 0) process.exit(hygiene.status ?? 1);

console.log('# building');
// From an empty dist/: tsc never removes the output of a source file that is gone, and a stale
// compiled migration would be applied to the test databases.
rmSync(join(root, 'dist'), { recursive: true, force: true });
// Type errors fail the run; HELPDESK_TEST_ALLOW_TYPE_ERRORS=1 lets tests run anyway while a
// change is half-way (tsc still emits), for local iteration only.
// The test code itself is type-checked too (tsconfig.test.json), since tap only transpiles it.
for (const project of ['tsconfig.json', 'tsconfig.test.json']) {
  const build = spawnSync('npx', ['tsc', '-p', project], { stdio: 'inherit' });
  if (build.status !== 0 && process.env.HELPDESK_TEST_ALLOW_TYPE_ERRORS !== '1') process.exit(build.status ?? 1);
}

// tap builds its test class from the plugins package.json lists (`!@tapjs/typescript`: tsx loads
// TypeScript instead of ts-node) on the first run that finds a different build, but that run's
// test processes still get the old build's loaders: in a fresh clone every unit and integration
// file ran under ts-node as well, more than twice as slow. Building first gives every run the
// configured plugins.
const excluded = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).tap?.plugin ?? [])
  .filter((p) => p.startsWith('!')).map((p) => p.slice(1));
const builtClass = readFileSync(join(root, 'node_modules/@tapjs/test/test-built/dist/esm/index.js'), 'utf8');
if (excluded.some((p) => builtClass.includes(p))) {
  console.log(`# building tap's test class without ${excluded.join(', ')}`);
  const tapBuild = spawnSync('npx', ['tap', 'build'], { stdio: 'inherit' });
  if (tapBuild.status !== 0) process.exit(tapBuild.status ?? 1);
}

const { canConnect, createDb, withDatabase } = await import('../dist/src/db/connection.js');
const { migrateLatest } = await import('../dist/src/db/migrations.js');

let adminUrl = process.env.HELPDESK_TEST_DATABASE_URL || 'postgres://root@127.0.0.1:5432/postgres';
let embedded = null;
let embeddedDir = null;
if (!(await canConnect(adminUrl, 2000))) {
  const { openEmbeddedDatabase } = await import('../dist/src/db/embedded.js');
  embeddedDir = mkdtempSync(join(tmpdir(), 'helpdesk-test-pg-'));
  console.log(`# no PostgreSQL at ${new URL(adminUrl).host}: starting an embedded server in ${embeddedDir}`);
  embedded = await openEmbeddedDatabase(embeddedDir);
  adminUrl = withDatabase(embedded.url, 'postgres');
} else {
  console.log(`# PostgreSQL at ${new URL(adminUrl).host}`);
}

const template = `helpdesk_tpl_${randomBytes(5).toString('hex')}`;
const admin = createDb(adminUrl, { max: 1 });
await admin.raw(`create database ${template}`);
const tplDb = createDb(withDatabase(adminUrl, template), { max: 1 });
await migrateLatest(tplDb);
await tplDb.destroy();

function testFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}

// Test files run as TypeScript through tsx (package.json "tap": node-arg), so tap itself does not
// look for .ts files: a folder given on the command line is expanded here, as is the default.
const args = process.argv.slice(2).flatMap((a) => (!a.startsWith('-') && statSync(a, { throwIfNoEntry: false })?.isDirectory() ? testFiles(join(root, a)) : [a]));
const flags = args.filter((a) => a.startsWith('-'));
const named = args.filter((a) => !a.startsWith('-'));
const all = named.length ? named : testFiles(join(root, 'test'));
// Unit and integration files wait on the database much of the time, so they run several at a time
// (tap's own default leaves a core free: one at a time on 2 cores). The end-to-end files start
// daemons, compilers and npm installs of their own and have time limits: they run one at a time,
// after the rest. `--jobs=N` sets the first group's width.
const e2e = all.filter((f) => relative(root, resolve(f)).startsWith(join('test', 'e2e') + '/'));
const rest = all.filter((f) => !e2e.includes(f));
const width = flags.some((f) => f.startsWith('--jobs') || f.startsWith('-j')) ? [] : [`--jobs=${Math.max(2, availableParallelism())}`];
const tap = (files, extra) => new Promise((resolve) => {
  if (!files.length) return resolve(0);
  const child = spawn('npx', ['tap', '--disable-coverage', '--timeout=180', ...extra, ...files], {
    stdio: 'inherit',
    env: { ...process.env, HELPDESK_TEST_ADMIN_URL: adminUrl, HELPDESK_TEST_TEMPLATE: template },
  });
  child.on('exit', (status) => resolve(status ?? 1));
});
const firstCode = await tap(rest, [...width, ...flags]);
const e2eCode = await tap(e2e, [...flags.filter((f) => !f.startsWith('--jobs') && !f.startsWith('-j')), '--jobs=1']);
const code = firstCode || e2eCode;

// Test files drop their own databases; the template goes last.
await admin.raw(`drop database if exists ${template} with (force)`).catch(() => undefined);
await admin.destroy();
if (embedded) {
  await embedded.stop();
  rmSync(embeddedDir, { recursive: true, force: true });
  // Under root the cluster lives in a staging dir outside the data dir (src/db/root-staging.ts).
  if (embedded.stagingDir) rmSync(embedded.stagingDir, { recursive: true, force: true });
}
process.exit(code);
