import { loadConfig, type Config } from '../core/config.js';
import { CLI_ACTOR, type Ctx, type Deps } from '../core/context.js';
import { AppError, errors } from '../core/errors.js';
import { systemNow } from '../core/clock.js';
import { closeDeps, createDeps } from '../core/deps.js';
import { createLogger, logFormatFor } from '../core/logging.js';
import { openDatabase } from '../db/open-database.js';
import { migrationStatus } from '../db/migrations.js';
import { inTransaction } from '../db/transaction.js';
import { tenantBySlug, type TenantRef } from '../tenants/resolve.js';
import { HelpdeskClient } from '../client/helpdesk-client.js';
import { wireDomain } from '../wiring.js';

/**
 * Where a command does its work. Locally it opens the database itself (DATABASE_URL, else the
 * data dir's embedded server, shared with a running `serve`), builds the same Deps the daemon
 * uses and calls the service layer as the CLI operator; everything is closed when the command
 * ends. Remotely (`--api-url`), it talks to the REST API with a token.
 */
export interface LocalBackend {
  deps: Deps;
  /** The command's "now", read once at the edge. */
  now: Date;
  tenant(slug: string): Promise<TenantRef>;
  /** Runs `fn` as the CLI operator in one transaction of the tenant. */
  inTenant<T>(tenantId: string, fn: (ctx: Ctx) => Promise<T>): Promise<T>;
}

export interface LocalOptions {
  /** Refuse to work on a database with pending migrations (all but `migrate`). Default true. */
  requireMigrated?: boolean;
  /** Configuration; defaults to the environment. */
  config?: Config;
}

export async function withLocalBackend<T>(fn: (backend: LocalBackend) => Promise<T>, options: LocalOptions = {}): Promise<T> {
  wireDomain();
  const config = options.config ?? loadConfig();
  // Logs go to stderr: stdout belongs to the command's result (--json prints nothing else).
  const log = createLogger(config.logLevel, { fd: 2, format: logFormatFor(config.logFormat, 2), noColor: config.noColor });
  const database = await openDatabase(config, { onLog: (line) => log.debug({ postgres: true }, line) });
  const deps = createDeps(config, database.url, { log, poolMax: 4 });
  try {
    if (options.requireMigrated !== false) await assertMigrated(deps);
    const now = systemNow();
    return await fn({
      deps,
      now,
      tenant: async (slug) => {
        const tenant = await tenantBySlug(deps.db, slug);
        if (!tenant) throw new AppError('tenant_not_found', `Tenant ${slug} does not exist`);
        return tenant;
      },
      inTenant: (tenantId, work) => inTransaction(deps, { tenantId, actor: CLI_ACTOR, now }, work),
    });
  } finally {
    await closeDeps(deps);
    await database.close();
  }
}

async function assertMigrated(deps: Deps): Promise<void> {
  const { pending } = await migrationStatus(deps.db);
  if (pending.length > 0) {
    throw new AppError('not_ready', `The database has ${pending.length} pending migration(s); run \`helpdesk migrate\` (or start \`helpdesk serve\`) first`, { pending });
  }
}

/** The REST client when `--api-url` was given (then a token is required), else null: work locally. */
export function remoteClient(flags: { 'api-url'?: string; token?: string }): HelpdeskClient | null {
  if (!flags['api-url']) return null;
  if (!flags.token) throw errors.validation([{ field: 'token', message: 'is required with --api-url (or set HELPDESK_TOKEN)' }]);
  return new HelpdeskClient(flags['api-url'], flags.token);
}
