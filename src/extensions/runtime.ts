import { Readable } from 'node:stream';
import type { Ctx, Deps } from '../core/context.js';
import { errors } from '../core/errors.js';
import { blobStoreFor } from '../storage/store.js';
import { Extension } from './models.js';
import { callPlugin, PluginCallError, type PluginSpec } from './host.js';
import { moduleKey } from './service.js';

/**
 * From an installed extension to a plugin call: the module read once from the blob store (by
 * content hash), the configuration the plugin may read (only `scopes.config_keys`, secrets
 * decrypted here and nowhere else), the JSON in and out, failures turned into
 * `502 extension_failed` (logged with the reason; the daemon carries on).
 */
const modules = new Map<string, Uint8Array>();
const MODULE_CACHE_LIMIT = 64;

async function readStream(stream: Readable): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return new Uint8Array(Buffer.concat(chunks));
}

async function moduleBytes(deps: Deps, row: Extension): Promise<Uint8Array> {
  const key = moduleKey(row.tenant_id, row.module_sha256);
  let bytes = modules.get(key);
  if (!bytes) {
    bytes = await readStream(await blobStoreFor(deps.config).get(key));
    if (modules.size >= MODULE_CACHE_LIMIT) modules.delete(modules.keys().next().value!);
    modules.set(key, bytes);
  }
  return bytes;
}

function pluginConfig(deps: Deps, row: Extension): Record<string, string> {
  const all: Record<string, string> = { ...(row.config ?? {}) };
  if (row.secrets_enc) Object.assign(all, JSON.parse(deps.box.decrypt(row.secrets_enc)) as Record<string, string>);
  const readable: Record<string, string> = {};
  for (const key of row.manifest.scopes.config_keys) if (all[key] !== undefined) readable[key] = all[key]!;
  return readable;
}

async function specFor(deps: Deps, row: Extension): Promise<PluginSpec> {
  return {
    key: `${row.id}:${row.module_sha256}:${new Date(row.updated_at).getTime()}:${deps.config.webhooksAllowPrivate ? 'p' : 's'}`,
    name: row.name,
    wasm: await moduleBytes(deps, row),
    allowedHosts: row.manifest.scopes.http_hosts,
    config: pluginConfig(deps, row),
    timeoutMs: deps.config.extensionTimeoutMs,
    allowPrivate: deps.config.webhooksAllowPrivate,
  };
}

/** Runs `op` of an extension; the raw output bytes. */
export async function runRaw(deps: Deps, row: Extension, op: string, input: unknown): Promise<Uint8Array> {
  if (!row.manifest.entrypoints.includes(op)) throw errors.notFound('extension operation', op);
  try {
    return await callPlugin(await specFor(deps, row), op, input);
  } catch (error) {
    if (!(error instanceof PluginCallError)) throw error;
    deps.log.warn({ extension_id: row.id, tenant_id: row.tenant_id, op, reason: error.kind, err: error.message }, 'extension call failed');
    throw errors.extensionFailed(row.name, error.message);
  }
}

/** Runs `op` and parses its answer as one JSON document. */
export async function runJson(deps: Deps, row: Extension, op: string, input: unknown): Promise<unknown> {
  const bytes = await runRaw(deps, row, op, input);
  if (bytes.length === 0) return {};
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    deps.log.warn({ extension_id: row.id, op }, 'extension answered something other than JSON');
    throw errors.extensionFailed(row.name, 'its answer is not a JSON document');
  }
}

/** The enabled extension a staff route names by its manifest name ({provider}). */
export async function loadProvider(ctx: Ctx, provider: string): Promise<Extension> {
  const row = await Extension.scoped(ctx).where('name', provider).first();
  if (!row) throw errors.notFound('extension', provider);
  if (!row.enabled) throw errors.conflict(`The extension ${provider} is disabled`);
  return row;
}
