import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { errors } from '../core/errors.js';
import { KINDS, validateManifest, type Kind } from './manifest.js';
import { inspectModule } from './wasm-module.js';
import { MEMORY_MAX_PAGES } from './service.js';

/**
 * The plugin developer's toolchain behind `helpdesk plugin new` and `plugin build`: a project from
 * plugin-templates/<kind> (manifest, AssemblyScript source, README, tests), and a build with the
 * AssemblyScript compiler and the Extism PDK that ship with Helpdesk, checked the way an install
 * checks it (manifest rules, exports, memory), so what builds also installs.
 */
const run = promisify(execFile);
const require = createRequire(import.meta.url);

/** plugin-templates/, found upward from this file (sources and dist/ alike). */
export function templatesRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'plugin-templates', '_shared'))) return join(dir, 'plugin-templates');
    dir = dirname(dir);
  }
  throw new Error('plugin-templates/ not found next to the Helpdesk installation');
}

export interface NewPluginInput {
  name: string;
  kind: string;
  dir?: string;
  author?: string;
  vendorHost?: string;
}

export interface NewPluginResult {
  dir: string;
  kind: Kind;
  files: string[];
}

async function filesUnder(root: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(root, rel), { withFileTypes: true })) {
    const path = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...await filesUnder(root, path));
    else out.push(path);
  }
  return out;
}

export async function newPlugin(input: NewPluginInput): Promise<NewPluginResult> {
  if (!/^[a-z0-9][a-z0-9_-]{0,62}$/.test(input.name)) throw errors.invalid('name', 'must be lower-case letters, digits, - or _ (it names the plugin in routes)');
  if (!(KINDS as readonly string[]).includes(input.kind)) throw errors.invalid('kind', `must be one of ${KINDS.join(', ')}`);
  if (input.vendorHost !== undefined && !/^[a-z0-9.-]{1,253}$/.test(input.vendorHost)) throw errors.invalid('vendor-host', 'must be a lower-case host name');
  const dir = resolve(input.dir ?? input.name);
  if (existsSync(dir) && (await readdir(dir)).length > 0) throw errors.conflict(`${dir} exists and is not empty`);
  const root = templatesRoot();
  const values: Record<string, string> = {
    name: input.name, author: input.author ?? 'Plugin author', vendor_host: input.vendorHost ?? 'api.example.com', kind: input.kind,
  };
  const fill = (text: string) => text.replace(/\{\{(\w+)\}\}/g, (all, key: string) => values[key] ?? all);
  const files: string[] = [];
  const copy = async (from: string, to: string, template: boolean) => {
    await mkdir(dirname(join(dir, to)), { recursive: true });
    if (template) await writeFile(join(dir, to), fill(await readFile(from, 'utf8')));
    else await copyFile(from, join(dir, to));
    files.push(to);
  };
  for (const rel of await filesUnder(join(root, input.kind))) await copy(join(root, input.kind, rel), rel, /\.(json|md|mjs|ts)$/.test(rel));
  // Shared by every kind: the helpers, the test harness, package.json and .gitignore.
  const shared: Record<string, string> = { 'helpers.ts': 'assembly/helpers.ts', gitignore: '.gitignore' };
  for (const rel of await filesUnder(join(root, '_shared'))) await copy(join(root, '_shared', rel), shared[rel] ?? rel, true);
  return { dir, kind: input.kind as Kind, files: files.sort() };
}

export interface BuildResult {
  wasm: string;
  size: number;
  sha256: string;
  exports: string[];
  manifest: string;
}

/** node_modules holding the PDK and the JSON library that Helpdesk ships (asc --path). */
function libraryPath(): string {
  return resolve(dirname(require.resolve('@extism/as-pdk/package.json')), '..', '..');
}

export async function buildPlugin(dirInput: string): Promise<BuildResult> {
  const dir = resolve(dirInput);
  const entry = join(dir, 'assembly', 'index.ts');
  const manifestFile = join(dir, 'manifest.json');
  if (!existsSync(entry)) throw errors.invalid('dir', `has no assembly/index.ts (${dir})`);
  if (!existsSync(manifestFile)) throw errors.invalid('dir', `has no manifest.json (${dir})`);
  const wasm = join(dir, 'dist', 'plugin.wasm');
  await mkdir(join(dir, 'dist'), { recursive: true });
  const asc = join(dirname(require.resolve('assemblyscript/package.json')), 'bin', 'asc.js');
  try {
    await run(process.execPath, [asc, 'assembly/index.ts', '--outFile', 'dist/plugin.wasm', '--use', 'abort=assembly/helpers/pluginAbort',
      '--optimize', '--maximumMemory', String(MEMORY_MAX_PAGES), '--path', libraryPath()], { cwd: dir, maxBuffer: 8 * 1024 * 1024 });
  } catch (error) {
    const output = `${(error as { stdout?: string }).stdout ?? ''}${(error as { stderr?: string }).stderr ?? ''}`.trim();
    throw errors.invalid('source', `does not compile:\n${output.slice(0, 4000)}`);
  }
  const bytes = new Uint8Array(await readFile(wasm));
  const info = inspectModule(bytes, MEMORY_MAX_PAGES);
  let manifest: unknown;
  try {
    manifest = JSON.parse(await readFile(manifestFile, 'utf8'));
  } catch {
    throw errors.invalid('manifest', 'manifest.json is not valid JSON');
  }
  const checked = validateManifest(manifest, info.exports);
  if (checked.problems.length) throw errors.validation(checked.problems);
  return {
    wasm, size: (await stat(wasm)).size, sha256: createHash('sha256').update(bytes).digest('hex'), exports: info.exports.filter((e) => !e.startsWith('__')), manifest: manifestFile,
  };
}
