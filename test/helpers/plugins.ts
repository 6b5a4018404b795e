import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * Builds AssemblyScript plugin sources with the real toolchain (asc + @extism/as-pdk), the way a
 * plugin developer does, into a temp dir; builds are cached by source hash for the test run.
 */
const run = promisify(execFile);
const root = resolve(new URL('../../', import.meta.url).pathname);

export const PDK_PRELUDE = `
import { Host, Config } from "@extism/as-pdk";
export function myAbort(message: string | null, fileName: string | null, lineNumber: u32, columnNumber: u32): void { unreachable(); }
`;

export async function buildPlugin(source: string, options: { maximumMemory?: number } = {}): Promise<Uint8Array> {
  const hash = createHash('sha256').update(source).update(JSON.stringify(options)).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), `helpdesk-plugin-${hash}`);
  const out = join(dir, 'plugin.wasm');
  if (existsSync(out)) return new Uint8Array(await readFile(out));
  await mkdir(dir, { recursive: true });
  if (!existsSync(join(dir, 'node_modules'))) await symlink(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir').catch(() => undefined);
  await writeFile(join(dir, 'index.ts'), source);
  const args = [join(root, 'node_modules/assemblyscript/bin/asc.js'), 'index.ts', '--outFile', 'plugin.wasm', '--use', 'abort=index/myAbort', '--optimize'];
  if (options.maximumMemory) args.push('--maximumMemory', String(options.maximumMemory));
  await run(process.execPath, args, { cwd: dir });
  return new Uint8Array(await readFile(out));
}

export function manifestFor(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'tracker', version: '1.0.0', kind: 'context_tool', description: 'Test plugin', author: 'Tests',
    entrypoints: ['fetch_context'], config_fields: [], scopes: { http_hosts: [], config_keys: [], webhook: false, core: [] }, read_ops: [],
    ...overrides,
  };
}
