import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { sha256Hex } from '../core/crypto.js';
import { randomToken } from '../core/ids.js';
import { paginatePage, type Page, type PageInput } from '../core/pagination.js';
import { isUniqueViolation, scoped } from '../db/tenant-scope.js';
import { recordAudit } from '../audit/service.js';
import { emitExtensionEvent } from '../events/emit/extension.js';
import { blobStoreFor } from '../storage/store.js';
import { Extension } from './models.js';
import { validateManifest } from './manifest.js';
import { inspectModule, ModuleProblem } from './wasm-module.js';
import { dropPools } from './host.js';
import { MAX_MODULE_BYTES, type ExtensionConfigPatch, type ExtensionInstall, type ExtensionOut } from './schemas.js';

/**
 * Installing and managing extensions (CONTRACT §13): the manifest and module are checked together
 * (every problem named, nothing stored on refusal), the module is stored by content hash, password
 * config values are encrypted, and every change records its `extension.*` event and audit row.
 */
export const MEMORY_MAX_PAGES = 1024; // 64 MiB
export const MASK = '********';
export const MAX_EXTENSIONS_PER_TENANT = 50;

export const moduleKey = (tenantId: string, sha256: string) => `extensions/${tenantId}/${sha256}.wasm`;

export function hookUrl(ctx: Ctx, token: string): string {
  return `${ctx.deps.config.siteUrl}/api/v1/integrations/extensions/hook/${token}`;
}

export function extensionOut(ctx: Ctx, row: Extension): ExtensionOut {
  const m = row.manifest;
  const config: Record<string, string> = { ...(row.config ?? {}) };
  if (row.secrets_enc) for (const key of Object.keys(JSON.parse(ctx.deps.box.decrypt(row.secrets_enc)) as object)) config[key] = MASK;
  return {
    id: row.id, name: row.name, version: row.version, kind: row.kind, description: row.description, author: row.author,
    enabled: row.enabled, entrypoints: m.entrypoints, config_fields: m.config_fields, scopes: m.scopes, read_ops: m.read_ops,
    link_op: m.link_op ?? null, unlink_op: m.unlink_op ?? null, create_op: m.create_op ?? null,
    create_form_op: m.create_form_op ?? null, search_op: m.search_op ?? null,
    module_sha256: row.module_sha256,
    hook_url: row.hook_token_enc ? hookUrl(ctx, ctx.deps.box.decrypt(row.hook_token_enc)) : null,
    config,
    created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)!,
  };
}

export async function loadExtension(ctx: Ctx, id: string): Promise<Extension> {
  const row = await Extension.findIn(ctx, id);
  if (!row) throw errors.notFound('extension', id);
  return row;
}

export async function listExtensions(ctx: Ctx, query: PageInput): Promise<Page<ExtensionOut>> {
  const qb = scoped(ctx, 'extensions').orderBy('created_at').orderBy('id');
  return paginatePage<Extension, ExtensionOut>(query, qb, (row) => extensionOut(ctx, row));
}

export async function getExtension(ctx: Ctx, id: string): Promise<ExtensionOut> {
  return extensionOut(ctx, await loadExtension(ctx, id));
}

function decodeModule(base64: string): Buffer | null {
  const clean = base64.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(clean)) return null;
  return Buffer.from(clean, 'base64');
}

function newHookToken(): { token: string; hash: string } {
  const token = `hkx_${randomToken(32)}`;
  return { token, hash: sha256Hex(token) };
}

export async function installExtension(ctx: Ctx, input: ExtensionInstall | { manifest: unknown; module: Uint8Array }): Promise<ExtensionOut> {
  const problems: FieldProblem[] = [];
  let bytes: Uint8Array | null = null;
  if ('module' in input) bytes = input.module;
  else {
    bytes = decodeModule(input.module_base64);
    if (!bytes) problems.push({ field: 'module_base64', message: 'is not valid base64' });
  }
  const moduleField = 'module' in input ? 'module' : 'module_base64';
  let exports: string[] | null = null;
  let stored: Uint8Array | null = null;
  if (bytes) {
    if (bytes.length > MAX_MODULE_BYTES) problems.push({ field: moduleField, message: `must be at most ${MAX_MODULE_BYTES} bytes` });
    else {
      try {
        const info = inspectModule(bytes, MEMORY_MAX_PAGES);
        exports = info.exports;
        stored = info.bytes;
      } catch (error) {
        if (!(error instanceof ModuleProblem)) throw error;
        problems.push({ field: moduleField, message: error.message });
      }
    }
  }
  const checked = validateManifest(input.manifest, exports);
  problems.push(...checked.problems);
  if (problems.length || !checked.manifest || !stored) throw errors.validation(problems);
  const manifest = checked.manifest;

  const count = await Extension.scoped(ctx).resultSize();
  if (count >= MAX_EXTENSIONS_PER_TENANT) throw errors.conflict(`A tenant may install at most ${MAX_EXTENSIONS_PER_TENANT} extensions`);
  const sha256 = createHash('sha256').update(stored).digest('hex');
  const hook = manifest.scopes.webhook ? newHookToken() : null;
  let row: Extension;
  try {
    row = await Extension.insertIn(ctx, {
      name: manifest.name, version: manifest.version, kind: manifest.kind, description: manifest.description, author: manifest.author,
      enabled: true, manifest: manifest as never, module_sha256: sha256, module_size: stored.length, config: {} as never, secrets_enc: null,
      hook_token_hash: hook?.hash ?? null, hook_token_enc: hook ? ctx.deps.box.encrypt(hook.token) : null,
      created_at: ctx.now, updated_at: ctx.now,
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw errors.alreadyExists('extension', 'manifest.name', manifest.name);
    throw error;
  }
  // Content-addressed: the same module installed again is stored once per tenant.
  const store = blobStoreFor(ctx.deps.config);
  const key = moduleKey(ctx.tenantId, sha256);
  if (!(await store.stat(key))) await store.put(key, Readable.from([Buffer.from(stored)]));
  await emitExtensionEvent(ctx, 'extension.installed', { extension_id: row.id, name: row.name, kind: row.kind });
  await recordAudit(ctx, {
    action: 'extension.installed', resourceType: 'extension', resourceId: row.id,
    changes: { name: row.name, version: row.version, kind: row.kind, module_sha256: sha256, scopes: manifest.scopes },
  });
  return extensionOut(ctx, row);
}

/**
 * The multipart form of an install (CONTRACT §13): parts `manifest` (JSON text, as a field or a
 * file) and `module` (the .wasm), the same checks and problems as the JSON form.
 */
export async function installExtensionForm(ctx: Ctx, parts: Map<string, Buffer>): Promise<ExtensionOut> {
  const problems: FieldProblem[] = [];
  const manifestText = parts.get('manifest');
  const module = parts.get('module');
  let manifest: unknown;
  if (!manifestText) problems.push({ field: 'manifest', message: 'is required (a part holding the manifest as JSON)' });
  else {
    try {
      manifest = JSON.parse(manifestText.toString('utf8'));
    } catch {
      problems.push({ field: 'manifest', message: 'is not valid JSON' });
    }
    if (manifest !== undefined && (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest))) {
      problems.push({ field: 'manifest', message: 'must be a JSON object' });
    }
  }
  if (!module || module.length === 0) problems.push({ field: 'module', message: 'is required (a part holding the .wasm module)' });
  if (problems.length) throw errors.validation(problems);
  return installExtension(ctx, { manifest, module: new Uint8Array(module!) });
}

export async function configureExtension(ctx: Ctx, id: string, input: ExtensionConfigPatch): Promise<ExtensionOut> {
  const row = await loadExtension(ctx, id);
  const fields = new Map(row.manifest.config_fields.map((f) => [f.key, f]));
  const problems: FieldProblem[] = [];
  for (const key of Object.keys(input.config)) if (!fields.has(key)) problems.push({ field: `config.${key}`, message: 'is not a config field of this extension' });
  if (problems.length) throw errors.validation(problems);
  const plain: Record<string, string> = { ...(row.config ?? {}) };
  const secrets: Record<string, string> = row.secrets_enc ? JSON.parse(ctx.deps.box.decrypt(row.secrets_enc)) : {};
  for (const [key, value] of Object.entries(input.config)) {
    const target = fields.get(key)!.type === 'password' ? secrets : plain;
    if (value === null) delete target[key];
    else target[key] = value;
  }
  const [updated] = await Extension.scoped(ctx).where('id', id).patch({
    config: plain, secrets_enc: Object.keys(secrets).length ? ctx.deps.box.encrypt(JSON.stringify(secrets)) : null, updated_at: ctx.now,
  } as never).returning('*') as unknown as Extension[];
  await recordAudit(ctx, { action: 'extension.configured', resourceType: 'extension', resourceId: id, changes: { keys: Object.keys(input.config).sort() } });
  ctx.afterCommit(() => dropPools(id));
  return extensionOut(ctx, updated!);
}

export async function setExtensionEnabled(ctx: Ctx, id: string, enabled: boolean): Promise<ExtensionOut> {
  const row = await loadExtension(ctx, id);
  if (row.enabled === enabled) return extensionOut(ctx, row);
  const [updated] = await Extension.scoped(ctx).where('id', id).patch({ enabled, updated_at: ctx.now } as never).returning('*') as unknown as Extension[];
  const type = enabled ? 'extension.enabled' : 'extension.disabled';
  await emitExtensionEvent(ctx, type, { extension_id: id, name: row.name, kind: row.kind });
  await recordAudit(ctx, { action: type, resourceType: 'extension', resourceId: id, changes: { enabled: { from: row.enabled, to: enabled } } });
  if (!enabled) ctx.afterCommit(() => dropPools(id));
  return extensionOut(ctx, updated!);
}

export async function uninstallExtension(ctx: Ctx, id: string): Promise<void> {
  const row = await loadExtension(ctx, id);
  await Extension.scoped(ctx).where('id', id).delete();
  await emitExtensionEvent(ctx, 'extension.uninstalled', { extension_id: id, name: row.name, kind: row.kind });
  await recordAudit(ctx, { action: 'extension.uninstalled', resourceType: 'extension', resourceId: id, changes: { name: row.name, version: row.version } });
  const stillUsed = await Extension.scoped(ctx).where('module_sha256', row.module_sha256).resultSize();
  const { tenantId, deps } = ctx;
  ctx.afterCommit(async () => {
    await dropPools(id);
    if (!stillUsed) await blobStoreFor(deps.config).delete(moduleKey(tenantId, row.module_sha256));
  });
}

export async function rotateHookToken(ctx: Ctx, id: string): Promise<{ hook_url: string }> {
  const row = await loadExtension(ctx, id);
  if (!row.manifest.scopes.webhook) throw errors.conflict(`The extension ${row.name} receives no webhooks (scopes.webhook is false)`);
  const hook = newHookToken();
  await Extension.scoped(ctx).where('id', id).patch({ hook_token_hash: hook.hash, hook_token_enc: ctx.deps.box.encrypt(hook.token), updated_at: ctx.now } as never);
  await recordAudit(ctx, { action: 'extension.hook_token_rotated', resourceType: 'extension', resourceId: id });
  return { hook_url: hookUrl(ctx, hook.token) };
}
