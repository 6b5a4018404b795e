import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../src/core/config.js';
import { SYSTEM_ACTOR, type Deps } from '../src/core/context.js';
import { systemNow } from '../src/core/clock.js';
import { closeDeps, createDeps } from '../src/core/deps.js';
import { settleMirrors } from '../src/meetings/mirroring.js';
import type { LogFormat, Logger } from '../src/core/logging.js';
import { openDatabase, type OpenedDatabase } from '../src/db/open-database.js';
import { migrateLatest } from '../src/db/migrations.js';
import { bootstrapDefaultTenant, type CreatedTenant } from '../src/tenants/service.js';
import { startJobManager, type JobManager } from '../src/jobs/manager.js';
import { startDispatchLoop } from '../src/webhooks/dispatch-loop.js';
import { buildApp } from './app.js';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.js';

/**
 * `helpdesk serve`: the start sequence (database → migrations → first-start tenant → app →
 * listen → scheduler) and its reverse on shutdown. Each step registers how to undo itself, so a
 * failure half-way (port taken, database down) releases what was already started.
 */
export interface ServeOptions {
  config: Config;
  log: Logger;
  port: number;
  host: string;
  /** Run the job scheduler (false with --no-jobs). */
  jobs: boolean;
  /** Only the scheduler, no HTTP server (--jobs-only). */
  jobsOnly: boolean;
  tls?: { cert: Buffer; key: Buffer };
  /** The format of the job workers' logs, the same as `log`'s (default JSON). */
  logFormat?: LogFormat;
}

export interface RunningServer {
  /** `http(s)://host:port` actually listened on; null with --jobs-only. */
  url: string | null;
  port: number | null;
  /** The first-start tenant and its generated login, when this start created them. */
  bootstrap: CreatedTenant | null;
  database: OpenedDatabase['kind'];
  /** What the operator should hear once about the embedded database (where it lives and why), or null. */
  databaseNotice: string | null;
  jobs: boolean;
  /** Graceful stop: in-flight requests and running jobs finish first. Idempotent. */
  close(): Promise<void>;
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const { config, log } = options;
  const undo: Array<() => Promise<void> | void> = [];
  const unwind = async () => {
    for (const step of undo.reverse().splice(0)) {
      try {
        await step();
      } catch (error) {
        log.error({ err: error }, 'shutdown step failed');
      }
    }
  };

  try {
    // Only the embedded cluster needs the lock: an external server is shared by design.
    if (!config.databaseUrl) {
      const lock: DataDirLock = acquireDataDirLock(config.dataDir);
      undo.push(() => lock.release());
    }
    // Its own process group: a Ctrl-C at the terminal reaches the daemon only, which finishes its
    // requests and jobs and then stops the embedded server (src/db/postgres-process.ts).
    const database = await openDatabase(config, { onLog: (line) => log.debug({ postgres: true }, line), ownProcessGroup: true });
    undo.push(() => database.close());
    const deps: Deps = createDeps(config, database.url, { log });
    undo.push(() => closeDeps(deps));
    // Calendar mirrors still under way (each within its budget) finish before the database closes.
    undo.push(() => settleMirrors());

    const applied = await migrateLatest(deps.db);
    if (applied.length) log.info({ migrations: applied }, 'database migrated');

    const bootstrap = options.jobsOnly ? null : await bootstrapDefaultTenant(deps, config.adminEmail, SYSTEM_ACTOR, systemNow());

    // The scheduler starts before the app listens so that unwinding (in reverse) stops taking
    // requests first, then waits for running jobs, then closes the database.
    if (options.jobs) {
      const manager: JobManager = await startJobManager({ databaseUrl: database.url, log, logFormat: options.logFormat });
      undo.push(() => manager.stop());
      // Webhooks leave on the commit's NOTIFY, not on the next scheduled run.
      const dispatch = await startDispatchLoop(deps, { databaseUrl: database.url });
      undo.push(() => dispatch.stop());
    }

    let url: string | null = null;
    let port: number | null = null;
    if (!options.jobsOnly) {
      const app: FastifyInstance = await buildApp(deps, options.tls ? { https: options.tls } : {});
      // app.close() stops accepting, closes idle keep-alive connections and waits for requests
      // in flight.
      undo.push(() => app.close());
      await app.listen({ port: options.port, host: options.host });
      port = (app.server.address() as AddressInfo).port;
      url = `${options.tls ? 'https' : 'http'}://${hostForUrl(options.host)}:${port}`;
    }

    let closing: Promise<void> | null = null;
    return {
      url,
      port,
      bootstrap,
      database: database.kind,
      databaseNotice: database.notice,
      jobs: options.jobs,
      close: () => (closing ??= unwind()),
    };
  } catch (error) {
    await unwind();
    throw error;
  }
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
