// Loaded on first use: importing Extism prints a WASI warning, which no CLI command but these should show.
import type { Plugin } from '@extism/extism';
import ipaddr from 'ipaddr.js';
import { Agent, fetch as undiciFetch } from 'undici';
import { guardedLookup, isForbiddenAddress } from '../webhooks/url-guard.js';

/**
 * The plugin host: runs extension entrypoints in Extism worker threads, each call stopped after a
 * time-out, each instance's linear memory capped (the module was rewritten at install, see
 * wasm-module.ts), HTTP allowed only to the manifest's hosts (through a fetch that never follows a
 * redirect, so an allowed host cannot send the plugin elsewhere), configuration limited to the
 * keys the manifest lists. Instances are kept warm, a few per extension; one that failed (trap,
 * time-out, host refusal) is closed and replaced by a fresh one on the next call. A worker thread
 * is all a misbehaving plugin can hold: the daemon's event loop and other tenants' instances go on.
 */
const POOL_SIZE = 2;
const MAX_WAITING = 32;
export const MAX_OUTPUT_BYTES = 1024 * 1024;

export interface PluginSpec {
  /** Identifies one installed configuration: extension id + module hash + config version. */
  key: string;
  name: string;
  wasm: Uint8Array;
  allowedHosts: string[];
  config: Record<string, string>;
  timeoutMs: number;
  /** Lifts the outbound-target guard (HELPDESK_WEBHOOKS_ALLOW_PRIVATE: tests, private networks). */
  allowPrivate: boolean;
}

export class PluginCallError extends Error {
  constructor(message: string, readonly kind: 'timeout' | 'trap' | 'output' | 'busy') {
    super(message);
  }
}

export function hostAllowed(hostname: string, allowed: readonly string[]): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return allowed.some((pattern) => pattern === host || (pattern.startsWith('*.') && host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1));
}

const BLOCKED_NAMES = [/^localhost$/i, /\.localhost$/i, /^metadata$/i, /^metadata\.google\.internal$/i, /^instance-data(\.ec2\.internal)?$/i];

/**
 * The connections of plugin HTTP: every one resolves its host through the webhooks' SSRF guard,
 * which refuses loopback, private, link-local (cloud metadata) and other non-public addresses
 * unless private targets are allowed. Checked at connection time, so DNS rebinding is caught too.
 */
const agents = new Map<boolean, Agent>();
function agentFor(allowPrivate: boolean): Agent {
  let agent = agents.get(allowPrivate);
  if (!agent) {
    agent = new Agent({ connections: 16, keepAliveTimeout: 4_000, connect: { timeout: 5_000, lookup: guardedLookup(allowPrivate) as never } });
    agents.set(allowPrivate, agent);
  }
  return agent;
}

/** Why the project's outbound-target rules refuse this URL before connecting (an IP literal or a reserved name), or null. */
export function refusedTarget(url: URL, allowPrivate: boolean): string | null {
  if (allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (ipaddr.isValid(host)) return isForbiddenAddress(host) ? `${host} is a non-public address` : null;
  return BLOCKED_NAMES.some((re) => re.test(host)) ? `${host} is a reserved name` : null;
}

/**
 * The fetch a plugin's HTTP requests go through: only the manifest's hosts, no redirects followed,
 * and the outbound-target rules (no loopback, private, link-local or metadata address, checked on
 * the resolved address) even for a host the manifest allows.
 */
export function guardedFetch(allowed: readonly string[], allowPrivate = false): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    if (!['http:', 'https:'].includes(url.protocol) || !hostAllowed(url.hostname, allowed)) {
      throw new Error(`HTTP request to ${url.hostname} is not allowed`);
    }
    const refused = refusedTarget(url, allowPrivate);
    if (refused) throw new Error(`HTTP request to ${url.hostname} is refused: ${refused}`);
    // The caller's signal (a crawler's per-page timeout, a cancelled call) still counts; ten
    // seconds is the ceiling either way.
    const ceiling = AbortSignal.timeout(10_000);
    const signal = init?.signal ? AbortSignal.any([init.signal, ceiling]) : ceiling;
    try {
      return await undiciFetch(url, {
        ...(init as object), redirect: 'manual', signal, dispatcher: agentFor(allowPrivate),
      }) as unknown as Response;
    } catch (error) {
      // undici says only "fetch failed"; the cause (e.g. the guard's refusal) is what the logs need.
      const cause = (error as { cause?: { message?: string } }).cause?.message;
      throw new Error(`HTTP request to ${url.hostname} failed: ${cause ?? (error as Error).message}`);
    }
  }) as typeof fetch;
}

interface Slot {
  plugin: Plugin;
  busy: boolean;
}

class Pool {
  private slots: Slot[] = [];
  private creating = 0;
  private waiters: Array<(slot: Slot | null) => void> = [];
  closed = false;

  constructor(readonly spec: PluginSpec) {}

  private async create(): Promise<Slot> {
    const { default: createPlugin } = await import('@extism/extism');
    const plugin = await createPlugin({ wasm: [{ data: this.spec.wasm }] }, {
      useWasi: false,
      runInWorker: true,
      timeoutMs: this.spec.timeoutMs,
      allowedHosts: this.spec.allowedHosts,
      fetch: guardedFetch(this.spec.allowedHosts, this.spec.allowPrivate),
      config: this.spec.config,
      memory: { maxPages: 1024, maxHttpResponseBytes: MAX_OUTPUT_BYTES, maxVarBytes: 64 * 1024 },
      logLevel: 'silent',
      logger: console,
    });
    return { plugin, busy: true };
  }

  private async acquire(): Promise<Slot> {
    const idle = this.slots.find((s) => !s.busy);
    if (idle) { idle.busy = true; return idle; }
    if (this.slots.length + this.creating < POOL_SIZE) {
      this.creating++;
      try {
        const slot = await this.create();
        if (this.closed) { void slot.plugin.close().catch(() => undefined); throw new PluginCallError('the extension was changed', 'busy'); }
        this.slots.push(slot);
        return slot;
      } finally {
        this.creating--;
      }
    }
    if (this.waiters.length >= MAX_WAITING) throw new PluginCallError('too many calls are waiting', 'busy');
    const slot = await new Promise<Slot | null>((resolve) => this.waiters.push(resolve));
    if (!slot) return this.acquire();
    return slot;
  }

  private release(slot: Slot, healthy: boolean): void {
    if (!healthy || this.closed) {
      this.slots = this.slots.filter((s) => s !== slot);
      void slot.plugin.close().catch(() => undefined);
      const waiter = this.waiters.shift();
      if (waiter) waiter(null);
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter(slot);
    else slot.busy = false;
  }

  async call(op: string, input: string): Promise<Uint8Array> {
    const slot = await this.acquire();
    let healthy = false;
    try {
      const output = await slot.plugin.call(op, input);
      const bytes = output ? output.bytes() : new Uint8Array();
      if (bytes.length > MAX_OUTPUT_BYTES) throw new PluginCallError(`its answer exceeds ${MAX_OUTPUT_BYTES} bytes`, 'output');
      healthy = true;
      return bytes.slice();
    } catch (error) {
      if (error instanceof PluginCallError) throw error;
      const message = (error as Error)?.message ?? String(error);
      if (/timeout|timed out/i.test(message)) throw new PluginCallError(`it did not answer within ${this.spec.timeoutMs} ms`, 'timeout');
      throw new PluginCallError(message.replace(/^Call error:\s*/, '').slice(0, 300), 'trap');
    } finally {
      this.release(slot, healthy);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter(null);
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((s) => s.plugin.close().catch(() => undefined)));
  }

  get size(): number {
    return this.slots.length;
  }
}

/** The process's pools, one per installed extension configuration. */
const pools = new Map<string, Pool>();

function poolFor(spec: PluginSpec): Pool {
  const prefix = spec.key.split(':')[0]!;
  let pool = pools.get(spec.key);
  if (!pool) {
    // A changed configuration or module replaces the extension's older pool.
    for (const [key, old] of pools) if (key.split(':')[0] === prefix) { pools.delete(key); void old.close(); }
    pool = new Pool(spec);
    pools.set(spec.key, pool);
  }
  return pool;
}

/** Runs one entrypoint with one JSON document in, its output bytes out. */
export async function callPlugin(spec: PluginSpec, op: string, input: unknown): Promise<Uint8Array> {
  return poolFor(spec).call(op, JSON.stringify(input));
}

/** Drops the warm instances of an extension (disabled, uninstalled, reconfigured). */
export async function dropPools(extensionId: string): Promise<void> {
  const closing: Promise<void>[] = [];
  for (const [key, pool] of pools) if (key.split(':')[0] === extensionId) { pools.delete(key); closing.push(pool.close()); }
  await Promise.all(closing);
}

/** Closes every warm instance (daemon shutdown, end of tests). */
export async function closeAllPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  const open = [...agents.values()];
  agents.clear();
  await Promise.all([...all.map((p) => p.close()), ...open.map((a) => a.close().catch(() => undefined))]);
}

export function warmInstances(extensionId: string): number {
  let n = 0;
  for (const [key, pool] of pools) if (key.split(':')[0] === extensionId) n += pool.size;
  return n;
}
