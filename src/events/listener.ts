import pg from 'pg';
import type { Logger } from '../core/logging.js';

/** The channel the event publisher NOTIFYs (src/events/publisher.ts), with the tenant id as payload. */
export const EVENTS_CHANNEL = 'helpdesk_events';

export interface EventListenerOptions {
  /** First wait before reconnecting after the connection drops; doubles up to `maxReconnectMs`. */
  reconnectMs?: number;
  maxReconnectMs?: number;
  /** How often the idle connection is checked with a query (a silently dead TCP peer sends no FIN). */
  pingMs?: number;
}

/**
 * A listener of another channel on the same connection (the credential cache's, for one): told of
 * every notification, and whether LISTEN is active, so it can stop trusting what it holds while
 * notifications may be lost.
 */
export interface ChannelWatcher {
  notify(payload: string): void;
  /** True once LISTEN on the channel is active; false as soon as the connection is lost or closed. */
  listening(active: boolean): void;
}

/**
 * One LISTEN connection per process (Deps.events), fanned out to whatever waits for a tenant's
 * events (the open live streams). It only says "tenant X has new events"; every subscriber then
 * reads `events` after the last `seq` it has seen, so a missed or duplicated notification costs
 * at most a read, never an event.
 *
 * The connection opens with the first subscription, not at start-up, so CLI commands and job
 * workers (which build the same Deps) never hold one. When it drops it is re-opened with backoff;
 * once LISTEN is active again every subscriber is woken, because notifications sent in the gap
 * are lost. Other channels share the connection through `watch` (one connection per process,
 * whatever listens); their watchers hear of the loss and of the new LISTEN instead.
 */
export class EventListener {
  private readonly subscribers = new Map<string, Set<() => void>>();
  private readonly watchers = new Map<string, ChannelWatcher>();
  /** The watched channels LISTEN is active for on the current connection. */
  private readonly watched = new Set<string>();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private failures = 0;
  private closed = false;
  private readonly options: Required<EventListenerOptions>;

  constructor(private readonly connectionString: string, private readonly log: Logger, options: EventListenerOptions = {}) {
    this.options = { reconnectMs: 250, maxReconnectMs: 10_000, pingMs: 30_000, ...options };
  }

  /** Calls `wake` whenever `tenantId` may have new events; returns the unsubscribe function. */
  subscribe(tenantId: string, wake: () => void): () => void {
    if (this.closed) throw new Error('the event listener is closed');
    const set = this.subscribers.get(tenantId) ?? new Set();
    set.add(wake);
    this.subscribers.set(tenantId, set);
    this.ensureConnected();
    return () => {
      set.delete(wake);
      if (!set.size && this.subscribers.get(tenantId) === set) this.subscribers.delete(tenantId);
    };
  }

  /**
   * Listens on `channel` too (one watcher per channel). The watcher hears `listening(true)` once
   * LISTEN is active, every notification from then on, and `listening(false)` when the connection
   * drops; reconnection is the same as for the event subscribers. A watcher stays until close().
   */
  watch(channel: string, watcher: ChannelWatcher): void {
    if (this.closed) throw new Error('the event listener is closed');
    if (!/^[a-z_][a-z0-9_]*$/.test(channel) || channel === EVENTS_CHANNEL) throw new Error(`cannot watch channel ${channel}`);
    if (this.watchers.has(channel)) throw new Error(`channel ${channel} is already watched`);
    this.watchers.set(channel, watcher);
    if (this.client && !this.connecting) void this.listenWatched(this.client);
    else this.ensureConnected();
  }

  /** True while LISTEN is active (for readiness and tests). */
  get listening(): boolean {
    return this.client !== null && this.connecting === null;
  }

  /** The backend pid of the LISTEN connection, or null (tests terminate it to prove reconnection). */
  get backendPid(): number | null {
    return (this.client as unknown as { processID?: number } | null)?.processID ?? null;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subscribers.clear();
    this.unwatchAll();
    this.watchers.clear();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.pingTimer) clearInterval(this.pingTimer);
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private ensureConnected(): void {
    if (this.client || this.connecting || this.retryTimer || this.closed) return;
    this.connecting = this.connect().finally(() => {
      this.connecting = null;
    });
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString, application_name: 'helpdesk-events', keepAlive: true });
    client.on('notification', (message) => {
      if (message.channel === EVENTS_CHANNEL) this.wake(message.payload ?? '');
      else if (this.watched.has(message.channel)) this.watchers.get(message.channel)?.notify(message.payload ?? '');
    });
    client.on('error', (error) => this.dropped(client, error));
    client.on('end', () => this.dropped(client, null));
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch (error) {
      this.dropped(client, error as Error);
      return;
    }
    if (this.closed) return;
    if (this.failures) this.log.info({ after: this.failures }, 'event listener reconnected');
    this.failures = 0;
    this.pingTimer = setInterval(() => {
      client.query('SELECT 1').catch((error: Error) => this.dropped(client, error));
    }, this.options.pingMs);
    this.pingTimer.unref();
    await this.listenWatched(client);
    // Whatever committed before LISTEN was active was not announced: every subscriber re-reads.
    for (const set of this.subscribers.values()) for (const wake of [...set]) wake();
  }

  /** LISTENs on every watched channel not yet listened on this connection, then tells its watcher. */
  private async listenWatched(client: pg.Client): Promise<void> {
    for (const [channel, watcher] of this.watchers) {
      if (this.watched.has(channel)) continue;
      try {
        await client.query(`LISTEN ${channel}`);
      } catch (error) {
        this.dropped(client, error as Error);
        return;
      }
      // The connection may have dropped while LISTEN was on its way.
      if (this.client !== client) return;
      this.watched.add(channel);
      watcher.listening(true);
    }
  }

  /** Every watcher stops trusting its channel: notifications may be lost from now on. */
  private unwatchAll(): void {
    const lost = [...this.watched].map((channel) => this.watchers.get(channel));
    this.watched.clear();
    for (const watcher of lost) watcher?.listening(false);
  }

  private wake(tenantId: string): void {
    for (const wake of [...(this.subscribers.get(tenantId) ?? [])]) wake();
  }

  /** The connection failed or ended: forget it and, unless closing, reconnect after a backoff. */
  private dropped(client: pg.Client, error: Error | null): void {
    if (this.client !== client) return;
    this.client = null;
    this.unwatchAll();
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
    client.removeAllListeners('notification');
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    if (this.closed) return;
    this.failures += 1;
    const delay = Math.min(this.options.reconnectMs * 2 ** (this.failures - 1), this.options.maxReconnectMs);
    this.log.warn({ err: error ?? undefined, retryInMs: delay }, 'event listener connection lost');
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.ensureConnected();
    }, delay);
    this.retryTimer.unref();
  }
}
