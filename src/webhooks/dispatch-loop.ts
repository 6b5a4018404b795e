import pg from 'pg';
import type { Deps } from '../core/context.js';
import { systemNow } from '../core/clock.js';
import { Dispatcher, type DispatchOptions } from './dispatcher.js';
import { WAKE_CHANNEL } from './deliveries.js';

/**
 * The long-lived dispatcher of `helpdesk serve`: a drain runs whenever Postgres announces a commit
 * (`NOTIFY helpdesk_events` from the event publisher right after the change's commit,
 * `helpdesk_webhooks` from a manual retry), so a delivery leaves within milliseconds of the
 * commit; a slow poll catches retries falling due and anything a lost connection missed. Drains
 * never overlap within a process; a wake-up during a drain runs one more drain after it. Other
 * daemons run their own loop: the claim keeps them apart.
 */
export interface DispatchLoop {
  stop(): Promise<void>;
  /** Resolves when the current drain (if any) and any drain it queued are finished (tests). */
  idle(): Promise<void>;
}

export interface LoopOptions extends DispatchOptions {
  databaseUrl: string;
  /** Poll interval for retries falling due (ms). */
  pollMs?: number;
}

const CHANNELS = ['helpdesk_events', WAKE_CHANNEL];

export async function startDispatchLoop(deps: Deps, options: LoopOptions): Promise<DispatchLoop> {
  const dispatcher = new Dispatcher(deps, options);
  let stopped = false;
  let running: Promise<void> | null = null;
  let again = false;
  let listener: pg.Client | null = null;

  const kick = (): void => {
    if (stopped) return;
    if (running) {
      again = true;
      dispatcher.poke();
      return;
    }
    running = (async () => {
      do {
        again = false;
        try {
          const totals = await dispatcher.drain(systemNow);
          if (totals.attempted) deps.log.debug({ webhooks: totals }, 'webhook deliveries dispatched');
        } catch (error) {
          deps.log.error({ err: error }, 'webhook dispatch failed');
        }
      } while (again && !stopped);
    })().finally(() => {
      running = null;
    });
  };

  const listen = async (): Promise<void> => {
    if (stopped) return;
    const client = new pg.Client({ connectionString: options.databaseUrl, application_name: 'helpdesk-webhooks' });
    client.on('notification', kick);
    client.on('error', (error) => {
      deps.log.warn({ err: error }, 'webhook listener lost its connection; reconnecting');
      listener = null;
      client.end().catch(() => undefined);
      setTimeout(() => void listen().catch(() => undefined), 1000).unref();
    });
    try {
      await client.connect();
      for (const channel of CHANNELS) await client.query(`LISTEN ${channel}`);
      listener = client;
      kick(); // whatever committed while we were not listening
    } catch (error) {
      deps.log.warn({ err: error }, 'webhook listener could not connect; retrying');
      await client.end().catch(() => undefined);
      if (!stopped) setTimeout(() => void listen().catch(() => undefined), 1000).unref();
    }
  };

  await listen();
  const poll = setInterval(kick, options.pollMs ?? 2000);
  poll.unref();

  return {
    idle: async () => {
      while (running) await running;
    },
    stop: async () => {
      stopped = true;
      clearInterval(poll);
      await listener?.end().catch(() => undefined);
      while (running) await running;
      await dispatcher.close();
    },
  };
}
