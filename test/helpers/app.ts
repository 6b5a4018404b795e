import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig, type Config } from '../../src/core/config.js';
import { CLI_ACTOR, type Deps, type Role } from '../../src/core/context.js';
import { createDeps, closeDeps } from '../../src/core/deps.js';
import { createLogger } from '../../src/core/logging.js';
import { installTenantGuard, type TenantGuard } from '../../src/db/tenant-guard.js';
import { inTransaction } from '../../src/db/transaction.js';
import { createTenant } from '../../src/tenants/service.js';
import { insertUser } from '../../src/directory/user-store.js';
import { createSession } from '../../src/auth/sessions.js';
import { issueApiKey } from '../../src/auth/api-key-store.js';
import { buildApp, type AppOptions } from '../../daemon/app.js';
import { createTestDatabase } from './db.js';
import { baseUrlOf } from './sse.js';

export interface TestEnv {
  app: FastifyInstance;
  deps: Deps;
  config: Config;
  guard: TenantGuard;
  databaseUrl: string;
}

/** A real app on a fresh real database, torn down with the test. */
export async function testApp(t: Test, overrides: Partial<Config> = {}, options: AppOptions = {}): Promise<TestEnv> {
  const databaseUrl = await createTestDatabase(t);
  const dataDir = mkdtempSync(join(tmpdir(), 'helpdesk-test-'));
  const config: Config = {
    ...loadConfig({ HELPDESK_DATA_DIR: dataDir, HELPDESK_SECRET_KEY: 'test-secret-key', HELPDESK_RATE_LIMIT_PER_MIN: '100000' }),
    // Live streams end quickly, so tests that walk every route through inject() get an answer.
    streamMaxMs: 300,
    ...overrides,
  };
  const deps = createDeps(config, databaseUrl, { log: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'), poolMax: 5 });
  const guard = await installTenantGuard(deps.db);
  const app = await buildApp(deps, options);
  t.teardown(async () => {
    guard.stop();
    await app.close();
    await closeDeps(deps);
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { app, deps, config, guard, databaseUrl };
}

/**
 * A second daemon on the same database as `env` (multi-daemon tests): its own Deps (pool and
 * LISTEN connection) and app, listening on loopback; `overrides` adjust its configuration.
 */
export async function secondApp(t: Test, env: TestEnv, overrides: Partial<Config> = {}) {
  const deps = createDeps({ ...env.config, ...overrides }, env.databaseUrl, { log: createLogger('silent'), poolMax: 3 });
  const app = await buildApp(deps);
  t.teardown(async () => {
    await app.close();
    await closeDeps(deps);
  });
  return { app, deps, url: await baseUrlOf(app) };
}

export interface TenantFixture {
  id: string;
  slug: string;
  admin: { id: string; email: string; password: string; token: string };
  /** The provisioning API key (`admin` scope). */
  apiKey: string;
}

let counter = 0;

/** A tenant with an administrator who is signed in (session token) and its provisioning key. */
export async function tenantFixture(env: TestEnv, slug = `t${++counter}-${Date.now().toString(36)}`): Promise<TenantFixture> {
  const password = 'correct horse battery staple';
  const created = await createTenant(env.deps, { slug, name: `Tenant ${slug}`, adminEmail: `admin@${slug}.example.com`, adminPassword: password }, CLI_ACTOR, new Date());
  const token = await inTransaction(env.deps, { tenantId: created.tenant.id, actor: CLI_ACTOR, now: new Date() }, (ctx) =>
    createSession(ctx, created.admin.id).then((s) => s.token),
  );
  return { id: created.tenant.id, slug, admin: { id: created.admin.id, email: created.admin.email, password, token }, apiKey: created.api_key };
}

export interface UserFixture {
  id: string;
  email: string;
  password: string;
  token: string;
}

/** A user of `role` in the tenant, signed in. */
export async function userFixture(env: TestEnv, tenantId: string, role: Role, email?: string): Promise<UserFixture> {
  const password = 'another long passphrase';
  const address = email ?? `${role}-${++counter}-${Date.now().toString(36)}@example.com`;
  return inTransaction(env.deps, { tenantId, actor: CLI_ACTOR, now: new Date() }, async (ctx) => {
    const user = await insertUser(ctx, { email: address, name: `${role} ${counter}`, role, password });
    const session = await createSession(ctx, user.id);
    return { id: user.id, email: user.email, password, token: session.token };
  });
}

export interface CallOptions {
  token?: string;
  tenant?: string;
  csrf?: string;
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

/** One API call through the real pipeline: `call(env, 'GET', '/users', {token})`. */
export async function call(env: TestEnv, method: InjectOptions['method'], path: string, options: CallOptions = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.tenant) headers['x-helpdesk-tenant'] = options.tenant;
  if (options.csrf) headers['x-csrf-token'] = options.csrf;
  return env.app.inject({
    method,
    url: path.startsWith('/api/') || path.startsWith('/meetings/feed/') ? path : `/api/v1${path}`,
    headers,
    query: options.query,
    ...(options.body !== undefined ? { payload: options.body as InjectOptions['payload'] } : {}),
  });
}

/** A CSRF token for the tenant, fetched the way a browser would. */
export async function csrfToken(env: TestEnv, tenantSlug: string): Promise<string> {
  const response = await call(env, 'GET', '/auth/csrf', { tenant: tenantSlug });
  if (response.statusCode !== 200) throw new Error(`GET /auth/csrf answered ${response.statusCode}: ${response.body}`);
  return response.json().csrf_token;
}

/** An API key of `userId` with exactly `scopes`, issued through the real store. */
export async function apiKeyFixture(
  env: TestEnv, tenantId: string, userId: string, scopes: string[], expiresAt: Date | null = null,
): Promise<{ id: string; key: string; prefix: string }> {
  return inTransaction(env.deps, { tenantId, actor: CLI_ACTOR, now: new Date() }, async (ctx) => {
    const { row, key } = await issueApiKey(ctx, { userId, name: 'fixture key', scopes, expiresAt });
    return { id: row.id, key, prefix: row.prefix };
  });
}
