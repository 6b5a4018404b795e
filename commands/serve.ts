import { readFileSync } from 'node:fs';
import { Flags } from '@oclif/core';
import { BaseCommand } from '../src/cli/base-command.js';
import { loadConfig } from '../src/core/config.js';
import { errors } from '../src/core/errors.js';
import { createLogger, logFormatFor } from '../src/core/logging.js';
import type { RunningServer } from '../daemon/server.js';
import { applyHeapGrowth } from '../daemon/heap-growth.js';

export default class Serve extends BaseCommand {
  static override summary = 'Migrate the database and run the REST API and the job scheduler';
  static override description = 'On an empty database it creates the tenant "default" and prints its administrator login once. SIGTERM or SIGINT stop it gracefully.';
  static override examples = ['<%= config.bin %> serve', '<%= config.bin %> serve --port 0 --no-jobs', '<%= config.bin %> serve --jobs-only'];

  static override flags = {
    port: Flags.integer({ description: 'Port to listen on; 0 picks a free one [default: PORT or 8080]', min: 0, max: 65535 }),
    host: Flags.string({ description: 'Address to listen on [default: HOST or 127.0.0.1]' }),
    jobs: Flags.boolean({ description: 'Run the job scheduler (--no-jobs: API only)', default: true, allowNo: true }),
    'jobs-only': Flags.boolean({ description: 'Run only the job scheduler, no HTTP server', default: false, exclusive: ['port', 'host', 'tls-cert', 'tls-key'] }),
    'tls-cert': Flags.string({ description: 'PEM certificate file: serve HTTPS (TLS 1.2 or newer)', dependsOn: ['tls-key'] }),
    'tls-key': Flags.string({ description: 'PEM private key file for --tls-cert', dependsOn: ['tls-cert'] }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Serve);
    if (flags['jobs-only'] && !flags.jobs) throw errors.invalid('jobs-only', 'cannot be combined with --no-jobs');
    const config = loadConfig();
    // Under --json stdout carries one document only, so the logs move to stderr. JSON lines, or
    // human lines on a terminal (HELPDESK_LOG_FORMAT decides when set).
    const fd = this.jsonEnabled() ? 2 : 1;
    const logFormat = logFormatFor(config.logFormat, fd);
    const log = createLogger(config.logLevel, { fd, format: logFormat, noColor: config.noColor });
    // Set before the daemon allocates: a process-wide V8 setting, so the command that owns the process sets it.
    log.debug({ heap_growing_percent: applyHeapGrowth(config.heapGrowingPercent) }, 'heap growth between full collections');
    // Listen for the stop signal before starting, so a signal during start-up still shuts down
    // cleanly. A second one stops at once (128 + its number, as the shell reports a kill); the exit
    // still stops the embedded database, which runs in a process group of its own.
    const stopSignal = new Promise<NodeJS.Signals>((resolve) => {
      let received = false;
      const onSignal = (signal: NodeJS.Signals) => {
        if (received) process.exit(signal === 'SIGINT' ? 130 : 143);
        received = true;
        resolve(signal);
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    });
    // Loaded here, not at the top: oclif imports every command module on each invocation, and the
    // daemon (Fastify, Swagger, Bree) would slow down every other command.
    const { startServer } = await import('../daemon/server.js');
    const server = await startServer({
      config,
      log,
      port: flags.port ?? config.port,
      host: flags.host ?? config.host,
      jobs: flags.jobs,
      jobsOnly: flags['jobs-only'],
      logFormat,
      tls: flags['tls-cert'] && flags['tls-key'] ? { cert: readPem('tls-cert', flags['tls-cert']), key: readPem('tls-key', flags['tls-key']) } : undefined,
    });
    this.announce(server);

    const signal = await stopSignal;
    log.info({ signal }, 'shutting down: finishing requests in flight and running jobs');
    await server.close();
    log.info('stopped');
    // JSON lines go out asynchronously (pino's default, for throughput): what is still queued,
    // e.g. behind a busy terminal, must be written before the process exits.
    await new Promise<void>((resolve) => log.flush(() => resolve()));
  }

  private announce(server: RunningServer): void {
    const admin = server.bootstrap;
    if (this.jsonEnabled()) {
      this.logJson({
        url: server.url, port: server.port, jobs: server.jobs, database: server.database, database_notice: server.databaseNotice,
        bootstrap: admin ? { tenant: admin.tenant.slug, email: admin.admin.email, password: admin.admin_password } : null,
      });
      return;
    }
    if (server.databaseNotice) this.log(server.databaseNotice);
    if (admin) {
      const base = server.url ?? 'http://HOST:PORT';
      this.log('First start: created the tenant "default" and its administrator. This login is shown only once:');
      this.log(`  tenant:   ${admin.tenant.slug}`);
      this.log(`  email:    ${admin.admin.email}`);
      this.log(`  password: ${admin.admin_password}`);
      this.log('Sign in (the tenant comes from the X-Helpdesk-Tenant header):');
      this.log(`  curl -s -H 'X-Helpdesk-Tenant: default' ${base}/api/v1/auth/csrf`);
      this.log(`  curl -s -H 'X-Helpdesk-Tenant: default' -H 'X-CSRF-Token: <csrf_token>' -H 'Content-Type: application/json' \\`);
      this.log(`       -d '{"email":"${admin.admin.email}","password":"${admin.admin_password}"}' ${base}/api/v1/auth/login`);
      this.log('  then send the returned token as: Authorization: Bearer <token>');
    }
    if (server.url) this.log(`Helpdesk listening on ${server.url}${server.jobs ? '' : ' (job scheduler off)'}`);
    else this.log('Helpdesk job scheduler running (no HTTP server)');
  }
}

function readPem(flag: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw errors.invalid(flag, `cannot be read: ${(error as Error).message}`);
  }
}
