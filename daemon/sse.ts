import { Readable } from 'node:stream';
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from '../src/core/logging.js';
import type { EventFeed, FeedMessage } from '../src/events/feed.js';

/**
 * A server-sent-events response (text/event-stream) over an EventFeed: what the pipeline sends
 * for a route declared with `stream` (route.ts). Fastify pipes it into the response, so the
 * socket's backpressure reaches the feed: a page is read only when the client has taken the last
 * one, and a slow client costs at most one page of memory (the events wait in the database).
 *
 * Around the feed's messages it writes a `retry:` hint first, a comment line every heartbeat
 * (proxies keep the connection open; the route's access is checked again then, so a revoked token
 * or a demoted user stops receiving), and it ends the stream after its lifetime (the client
 * reconnects with Last-Event-ID, possibly to another daemon). Ending waits a grace period for the
 * client to take what is left, then cuts the connection, so a stalled client cannot hold up a
 * graceful shutdown.
 */
export interface SseOptions {
  heartbeatMs: number;
  lifetimeMs: number;
  /** How long an ending stream may take to flush before its connection is cut. */
  graceMs?: number;
  /** The client's reconnection delay hint (`retry:`). */
  retryMs?: number;
  /** Checked at every heartbeat; false ends the stream (credentials lapsed). */
  stillAllowed: () => Promise<boolean>;
  response: ServerResponse;
  log: Pick<Logger, 'warn' | 'debug'>;
}

export function formatMessage(message: FeedMessage): string {
  // JSON.stringify never emits a raw line break, so the data is always one line.
  return `id: ${message.id}\nevent: ${message.event}\ndata: ${JSON.stringify(message.data)}\n\n`;
}

export class SseStream extends Readable {
  private wanted = false;
  private pending = true;
  private pumping = false;
  private ending: Promise<void> | null = null;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly feed: EventFeed, private readonly options: SseOptions) {
    super({ highWaterMark: 16 * 1024, encoding: 'utf8' });
    this.push(`retry: ${options.retryMs ?? 3000}\n\n`);
    feed.onWake(() => {
      this.pending = true;
      void this.pump();
    });
    this.timers.push(setInterval(() => void this.heartbeat(), options.heartbeatMs));
    this.timers.push(setTimeout(() => void this.stop('lifetime reached'), options.lifetimeMs));
  }

  override _read(): void {
    this.wanted = true;
    void this.pump();
  }

  /** Reads pages while the client keeps up and something is pending. */
  private async pump(): Promise<void> {
    if (this.pumping || this.ending || this.destroyed) return;
    this.pumping = true;
    try {
      while (this.wanted && this.pending && !this.ending && !this.destroyed) {
        this.pending = false;
        const page = await this.feed.next();
        if (this.ending || this.destroyed) return;
        for (const message of page.messages) {
          if (!this.push(formatMessage(message))) this.wanted = false;
        }
        if (page.more) this.pending = true;
      }
    } catch (error) {
      // The database failed mid-stream: end it with the error; the client reconnects with
      // Last-Event-ID and loses nothing.
      this.options.log.warn({ err: error }, 'live stream read failed');
      this.destroy(error as Error);
    } finally {
      this.pumping = false;
    }
  }

  private async heartbeat(): Promise<void> {
    if (this.ending || this.destroyed) return;
    let allowed = false;
    try {
      allowed = await this.options.stillAllowed();
    } catch (error) {
      this.options.log.warn({ err: error }, 'live stream access check failed');
    }
    if (!allowed) return this.stop('access lapsed');
    // A stalled client gets no heartbeats piled up behind the events it has not taken.
    if (!this.ending && !this.destroyed && this.readableLength < this.readableHighWaterMark) this.push(': heartbeat\n\n');
  }

  /**
   * Ends the stream cleanly (what was pushed still goes out); resolves once the connection is
   * done, cutting it after the grace period. Idempotent.
   */
  stop(reason: string): Promise<void> {
    if (this.ending) return this.ending;
    this.options.log.debug({ reason }, 'live stream ending');
    this.clearTimers();
    this.feed.close();
    const response = this.options.response;
    this.ending = new Promise<void>((resolve) => {
      if (this.destroyed || response.writableFinished || response.destroyed) return resolve();
      const cut = setTimeout(() => {
        if (!response.writableFinished) response.destroy();
        this.destroy();
        resolve();
      }, this.options.graceMs ?? 2000);
      const done = () => {
        clearTimeout(cut);
        resolve();
      };
      response.once('finish', done);
      response.once('close', done);
    });
    if (!this.destroyed) this.push(null);
    return this.ending;
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.clearTimers();
    this.feed.close();
    callback(error);
  }

  private clearTimers(): void {
    for (const timer of this.timers.splice(0)) clearTimeout(timer);
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The live streams this app is serving, ended when it closes. */
    openStreams: Set<SseStream>;
  }
}

/** Tracks the app's open streams and ends them when it closes (before the server waits for connections). */
export function streamsPlugin(app: FastifyInstance): void {
  app.decorate('openStreams', new Set<SseStream>());
  app.addHook('preClose', async () => {
    await Promise.all([...app.openStreams].map((stream) => stream.stop('server closing')));
  });
}
