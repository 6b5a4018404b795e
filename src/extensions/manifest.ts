import type { FieldProblem } from '../core/errors.js';

/**
 * The plugin manifest (SPEC "Extension (plugin) manifest", CONTRACT §13) and its validation. Every
 * rule is checked and every problem named (`manifest.<path>`), so a plugin developer fixes them all
 * in one round; the module's exports are checked against the entrypoints by the caller.
 */
export const KINDS = ['tasklist', 'webhook_relay', 'chatops', 'context_tool'] as const;
export type Kind = (typeof KINDS)[number];
export const CONFIG_FIELD_TYPES = ['text', 'password'] as const;
export const CORE_SCOPES = [
  'tickets:read', 'tickets:write', 'external_links:read', 'external_links:write', 'users:read',
] as const;
export const LIFECYCLE_OPS = ['link_op', 'unlink_op', 'create_op', 'create_form_op', 'search_op'] as const;

export interface ConfigField {
  key: string;
  label: string;
  type: 'text' | 'password';
  description: string;
  required: boolean;
}

export interface Manifest {
  name: string;
  version: string;
  kind: Kind;
  description: string;
  author: string;
  entrypoints: string[];
  config_fields: ConfigField[];
  scopes: { http_hosts: string[]; config_keys: string[]; webhook: boolean; core: string[] };
  read_ops: string[];
  link_op?: string;
  unlink_op?: string;
  create_op?: string;
  create_form_op?: string;
  search_op?: string;
}

const NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const OP = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const KEY = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;
const HOST = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const TOP_LEVEL = new Set([
  'name', 'version', 'kind', 'description', 'author', 'entrypoints', 'config_fields', 'scopes', 'read_ops', ...LIFECYCLE_OPS,
]);
const SCOPE_KEYS = new Set(['http_hosts', 'config_keys', 'webhook', 'core']);
const MAX_LIST = 64;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Validates a manifest; returns it normalised, or the list of problems. */
export function validateManifest(input: unknown, exports: readonly string[] | null): { manifest?: Manifest; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const at = (field: string, message: string) => problems.push({ field: field ? `manifest.${field}` : 'manifest', message });
  if (!isObject(input)) {
    at('', 'must be a JSON object');
    return { problems };
  }
  for (const key of Object.keys(input)) if (!TOP_LEVEL.has(key)) at(key.slice(0, 64), 'is not a manifest field');

  const text = (field: string, max: number, required: boolean, pattern?: RegExp, patternMessage?: string): string => {
    const value = input[field];
    if (value === undefined || value === null) {
      if (required) at(field, 'is required');
      return '';
    }
    if (typeof value !== 'string') { at(field, 'must be a string'); return ''; }
    if (required && value.trim() === '') { at(field, 'must not be blank'); return ''; }
    if (value.length > max) { at(field, `must be at most ${max} characters`); return ''; }
    if (pattern && !pattern.test(value)) { at(field, patternMessage ?? 'has an invalid form'); return ''; }
    return value;
  };
  const name = text('name', 63, true, NAME, 'must be lower-case letters, digits, - or _ (it names the plugin in routes)');
  const version = text('version', 50, true);
  const description = text('description', 1000, false);
  const author = text('author', 200, false);
  const kindValue = input.kind;
  let kind = '' as Kind;
  if (kindValue === undefined) at('kind', 'is required');
  else if (typeof kindValue !== 'string' || !(KINDS as readonly string[]).includes(kindValue)) at('kind', `must be one of ${KINDS.join(', ')}`);
  else kind = kindValue as Kind;

  const list = (field: string, value: unknown, pattern: RegExp, message: string, required = false): string[] => {
    if (value === undefined) {
      if (required) at(field, 'is required');
      return [];
    }
    if (!Array.isArray(value)) { at(field, 'must be a list of strings'); return []; }
    if (value.length > MAX_LIST) { at(field, `must have at most ${MAX_LIST} items`); return []; }
    const out: string[] = [];
    value.forEach((item, i) => {
      if (typeof item !== 'string' || !pattern.test(item)) at(`${field}.${i}`, message);
      else if (out.includes(item)) at(`${field}.${i}`, `repeats ${item}`);
      else out.push(item);
    });
    return out;
  };
  const entrypoints = list('entrypoints', input.entrypoints, OP, 'must be an operation name (letters, digits, _)', true);
  if (Array.isArray(input.entrypoints) && input.entrypoints.length === 0) at('entrypoints', 'must name at least one operation');
  if (exports) {
    entrypoints.forEach((op, i) => { if (!exports.includes(op)) at(`entrypoints.${i}`, `names ${op}, which the module does not export`); });
  }

  const configFields: ConfigField[] = [];
  if (input.config_fields !== undefined) {
    if (!Array.isArray(input.config_fields) || input.config_fields.length > MAX_LIST) at('config_fields', `must be a list of at most ${MAX_LIST} fields`);
    else input.config_fields.forEach((raw, i) => {
      const f = `config_fields.${i}`;
      if (!isObject(raw)) { at(f, 'must be an object {key, label, type, description, required}'); return; }
      for (const k of Object.keys(raw)) if (!['key', 'label', 'type', 'description', 'required'].includes(k)) at(`${f}.${k.slice(0, 64)}`, 'is not a config field property');
      const key = typeof raw.key === 'string' && KEY.test(raw.key) ? raw.key : (at(`${f}.key`, 'is required: letters, digits, _ . -'), '');
      if (key && configFields.some((c) => c.key === key)) at(`${f}.key`, `repeats ${key}`);
      const label = typeof raw.label === 'string' && raw.label.trim() && raw.label.length <= 200 ? raw.label : (at(`${f}.label`, 'is required (at most 200 characters)'), '');
      const type = (CONFIG_FIELD_TYPES as readonly unknown[]).includes(raw.type) ? raw.type as ConfigField['type'] : (at(`${f}.type`, `must be one of ${CONFIG_FIELD_TYPES.join(', ')}`), 'text');
      const desc = raw.description === undefined ? '' : typeof raw.description === 'string' && raw.description.length <= 1000 ? raw.description : (at(`${f}.description`, 'must be a string of at most 1000 characters'), '');
      const required = raw.required === undefined ? false : typeof raw.required === 'boolean' ? raw.required : (at(`${f}.required`, 'must be a boolean'), false);
      if (key) configFields.push({ key, label, type, description: desc, required });
    });
  }

  const scopes: Manifest['scopes'] = { http_hosts: [], config_keys: [], webhook: false, core: [] };
  if (input.scopes === undefined) at('scopes', 'is required');
  else if (!isObject(input.scopes)) at('scopes', 'must be an object');
  else {
    const s = input.scopes;
    for (const k of Object.keys(s)) if (!SCOPE_KEYS.has(k)) at(`scopes.${k.slice(0, 64)}`, 'is not a scope');
    scopes.http_hosts = list('scopes.http_hosts', s.http_hosts, HOST, 'must be a lower-case host name, optionally starting with *.');
    scopes.config_keys = list('scopes.config_keys', s.config_keys, KEY, 'must be a config key');
    scopes.config_keys.forEach((k, i) => {
      if (!configFields.some((c) => c.key === k)) at(`scopes.config_keys.${i}`, `names ${k}, which config_fields does not declare`);
    });
    if (s.webhook === undefined) scopes.webhook = false;
    else if (typeof s.webhook !== 'boolean') at('scopes.webhook', 'must be a boolean');
    else scopes.webhook = s.webhook;
    scopes.core = list('scopes.core', s.core, /^[a-z_]+:[a-z_]+$/, `must be one of ${CORE_SCOPES.join(', ')}`);
    scopes.core.forEach((c, i) => { if (!(CORE_SCOPES as readonly string[]).includes(c)) at(`scopes.core.${i}`, `must be one of ${CORE_SCOPES.join(', ')}`); });
  }
  const receives = entrypoints.includes('webhook_receive');
  if (scopes.webhook && !receives) at('scopes.webhook', 'is true but entrypoints do not include webhook_receive');
  if (!scopes.webhook && receives) at('entrypoints', 'include webhook_receive but scopes.webhook is not true');
  if (kind === 'webhook_relay' && !receives) at('entrypoints', 'of a webhook_relay plugin must include webhook_receive');

  const readOps = list('read_ops', input.read_ops, OP, 'must be an operation name');
  readOps.forEach((op, i) => {
    if (!entrypoints.includes(op)) at(`read_ops.${i}`, `names ${op}, which is not among the entrypoints`);
    if (op === 'webhook_receive') at(`read_ops.${i}`, 'may not expose webhook_receive to staff');
  });
  const manifest: Manifest = {
    name, version, kind, description, author, entrypoints, config_fields: configFields, scopes, read_ops: readOps,
  };
  for (const hook of LIFECYCLE_OPS) {
    const value = input[hook];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || !OP.test(value)) { at(hook, 'must be an operation name'); continue; }
    if (!entrypoints.includes(value)) at(hook, `names ${value}, which is not among the entrypoints`);
    if ((hook === 'create_form_op' || hook === 'search_op') && !readOps.includes(value)) at(hook, `names ${value}, which read_ops must list (staff call it as a read op)`);
    if ((hook === 'link_op' || hook === 'unlink_op' || hook === 'create_op') && readOps.includes(value)) at(hook, `names ${value}, which changes data and may not be a read op`);
    manifest[hook] = value;
  }
  return problems.length ? { problems } : { manifest, problems };
}
