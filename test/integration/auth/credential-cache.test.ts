import t, { type Test } from 'tap';
import type { FastifyInstance } from 'fastify';
import type { Knex } from 'knex';
import { apiKeyFixture, call, csrfToken, secondApp, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { CLI_ACTOR } from '../../../src/core/context.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { createSession } from '../../../src/auth/sessions.js';
import { SESSION_TTL_SECONDS } from '../../../src/auth/tokens.js';

/**
 * The daemon answers a bearer token it resolved before from memory (src/core/credential-cache.ts).
 * What a user relies on must hold all the same: a revoked session or key, a deactivated user, a
 * narrowed role are refused on the next request of the daemon that made the
 * change, promptly on every other daemon and after plain SQL (NOTIFY from triggers), after the TTL
 * at the latest if a notification were missed, and not at all while LISTEN is down; a cached
 * session is refused once it expires. The TTL is a minute here, so nothing but the invalidation
 * can explain a prompt refusal.
 */
const TTL_MS = 60_000;

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 2000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) {
      t.comment(`gave up waiting for ${what} after ${ms} ms`);
      return false;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The app under test, with a clock the tests move (AppOptions.clock). */
async function cachedApp(t: Test) {
  let offsetMs = 0;
  const keys = licenseKeys();
  const env = await testApp(t, { credentialCacheMs: TTL_MS, licensePublicKey: keys.publicKeyPem }, { clock: () => new Date(Date.now() + offsetMs) });
  const tenant = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  // The first token lookup opens the LISTEN; the cache is used once it is active.
  await call(env, 'GET', '/auth/me', { token: tenant.apiKey });
  t.ok(await until('LISTEN', () => env.deps.credentials.active, 5000), 'the cache is active once LISTEN is');
  return {
    env, tenant,
    now: () => new Date(Date.now() + offsetMs),
    advance: (ms: number) => { offsetMs += ms; },
  };
}

/** GET `path` with `token` on `app`; the status code. */
async function status(app: FastifyInstance, token: string, path = '/auth/me'): Promise<number> {
  return (await app.inject({ method: 'GET', url: `/api/v1${path}`, headers: { authorization: `Bearer ${token}` } })).statusCode;
}

/** Statements the app's pool sends while `fn` runs. */
async function statementsDuring(env: TestEnv, fn: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const listener = (query: { sql: string }) => seen.push(query.sql);
  env.deps.db.on('query', listener);
  try {
    await fn();
  } finally {
    env.deps.db.off('query', listener);
  }
  return seen;
}

t.test('a resolved token is answered from memory, and last_used_at is still kept', async (t) => {
  const { env, tenant } = await cachedApp(t);
  const agent = await userFixture(env, tenant.id, 'agent');
  const key = await apiKeyFixture(env, tenant.id, agent.id, ['tickets:read']);

  t.equal(await status(env.app, key.key), 200);
  const used = await env.deps.db('api_keys').where({ tenant_id: tenant.id, id: key.id }).first('last_used_at');
  t.ok(used.last_used_at, 'the first use is recorded');
  const statements = await statementsDuring(env, async () => {
    for (let i = 0; i < 5; i += 1) t.equal(await status(env.app, key.key), 200);
  });
  t.same(statements, [], 'GET /auth/me again: no statement at all');
  const again = await env.deps.db('api_keys').where({ tenant_id: tenant.id, id: key.id }).first('last_used_at');
  t.same(again.last_used_at, used.last_used_at, 'touched at most once a minute');
});

t.test('changes made through this daemon are refused on its very next request', async (t) => {
  const { env, tenant } = await cachedApp(t);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent');
  const csrf = await csrfToken(env, tenant.slug);

  await t.test('a session ended by logout', async (t) => {
    const session = (await userFixture(env, tenant.id, 'agent')).token;
    t.equal(await status(env.app, session), 200, 'cached');
    t.equal((await call(env, 'POST', '/auth/logout', { token: session, csrf })).statusCode, 204);
    t.equal(await status(env.app, session), 401, 'refused at once');
  });

  await t.test('a revoked API key', async (t) => {
    const key = await apiKeyFixture(env, tenant.id, agent.id, ['tickets:read']);
    t.equal(await status(env.app, key.key), 200, 'cached');
    t.equal((await call(env, 'DELETE', `/api-keys/${key.id}`, { token: admin })).statusCode, 204);
    t.equal(await status(env.app, key.key), 401, 'refused at once');
  });

  await t.test('a deactivated user (their API key, which deactivation does not revoke)', async (t) => {
    const user = await userFixture(env, tenant.id, 'agent');
    const key = await apiKeyFixture(env, tenant.id, user.id, ['tickets:read']);
    t.equal(await status(env.app, key.key), 200, 'cached');
    t.equal((await call(env, 'PATCH', `/users/${user.id}`, { token: admin, body: { active: false } })).statusCode, 200);
    t.equal(await status(env.app, key.key), 401, 'refused at once');
  });

  await t.test('a role change takes a scope away', async (t) => {
    const user = await userFixture(env, tenant.id, 'agent');
    t.equal(await status(env.app, user.token, '/users'), 200, 'an agent reads users (cached)');
    t.equal((await call(env, 'PATCH', `/users/${user.id}/role`, { token: admin, body: { role: 'customer' } })).statusCode, 200);
    t.equal(await status(env.app, user.token, '/users'), 403, 'a customer may not, at once');
  });

  await t.test('a custom role loses a permission', async (t) => {
    const user = await userFixture(env, tenant.id, 'agent');
    const role = (await call(env, 'POST', '/roles', { token: admin, body: { name: 'Reader' } })).json();
    t.equal((await call(env, 'PUT', `/roles/${role.id}/permissions`, { token: admin, body: { tickets: ['list', 'view'], users: ['list', 'view'] } })).statusCode, 200);
    t.equal((await call(env, 'PATCH', `/users/${user.id}/role`, { token: admin, body: { role: 'Reader' } })).statusCode, 200);
    t.equal(await status(env.app, user.token, '/users'), 200, 'the role grants users:read (cached)');
    t.equal((await call(env, 'PUT', `/roles/${role.id}/permissions`, { token: admin, body: { tickets: ['list', 'view'] } })).statusCode, 200);
    t.equal(await status(env.app, user.token, '/users'), 403, 'refused at once');
  });

  await t.test('GET /auth/me, answered from the cached user row, shows a profile change at once', async (t) => {
    const user = await userFixture(env, tenant.id, 'agent');
    t.equal(await status(env.app, user.token), 200, 'cached');
    t.equal((await call(env, 'PATCH', '/auth/me', { token: user.token, body: { name: 'Renamed Agent' } })).statusCode, 200);
    t.equal((await call(env, 'GET', '/auth/me', { token: user.token })).json().name, 'Renamed Agent');
  });
});

/**
 * A change the first daemon did not make: it hears of it through NOTIFY (the trigger's), so the
 * token is refused within moments, long before the minute-long TTL.
 */
async function refusedPromptly(t: Test, app: FastifyInstance, token: string, path: string, code: number, what: string) {
  t.ok(await until(what, async () => (await status(app, token, path)) === code), `${what}: ${code} within 2 s`);
}

t.test('changes made by another daemon are seen promptly', async (t) => {
  const { env, tenant } = await cachedApp(t);
  const second = await secondApp(t, env);
  const on2 = (method: 'DELETE' | 'PATCH' | 'PUT', url: string, body?: unknown) =>
    second.app.inject({ method, url: `/api/v1${url}`, headers: { authorization: `Bearer ${tenant.admin.token}` }, ...(body ? { payload: body as object } : {}) });

  const agent = await userFixture(env, tenant.id, 'agent');
  const key = await apiKeyFixture(env, tenant.id, agent.id, ['tickets:read']);
  t.equal(await status(env.app, key.key), 200, 'cached by the first daemon');
  t.equal((await on2('DELETE', `/api-keys/${key.id}`)).statusCode, 204, 'revoked on the second');
  await refusedPromptly(t, env.app, key.key, '/auth/me', 401, 'the revoked key');

  const user = await userFixture(env, tenant.id, 'agent');
  const userKey = await apiKeyFixture(env, tenant.id, user.id, ['tickets:read']);
  t.equal(await status(env.app, userKey.key), 200, 'cached by the first daemon');
  t.equal((await on2('PATCH', `/users/${user.id}`, { active: false })).statusCode, 200, 'deactivated on the second');
  await refusedPromptly(t, env.app, userKey.key, '/auth/me', 401, 'the deactivated user');

  const demoted = await userFixture(env, tenant.id, 'agent');
  t.equal(await status(env.app, demoted.token, '/users'), 200, 'cached by the first daemon');
  t.equal((await on2('PATCH', `/users/${demoted.id}/role`, { role: 'customer' })).statusCode, 200, 'demoted on the second');
  await refusedPromptly(t, env.app, demoted.token, '/users', 403, 'the demoted agent');
});

t.test('changes made in plain SQL are seen promptly', async (t) => {
  const { env, tenant } = await cachedApp(t);
  const db = env.deps.db;
  const admin = tenant.admin.token;

  const signedIn = await userFixture(env, tenant.id, 'agent');
  t.equal(await status(env.app, signedIn.token), 200, 'cached');
  t.equal(await status(env.app, admin), 200, 'cached');
  await db('sessions').where({ tenant_id: tenant.id, user_id: signedIn.id }).update({ revoked_at: new Date() });
  await refusedPromptly(t, env.app, signedIn.token, '/auth/me', 401, 'the revoked session');
  t.equal(await status(env.app, admin), 200, 'another session of the tenant lives on');

  const user = await userFixture(env, tenant.id, 'agent');
  const key = await apiKeyFixture(env, tenant.id, user.id, ['tickets:read', 'users:read']);
  t.equal(await status(env.app, key.key, '/users'), 200, 'cached');
  await db('api_keys').where({ tenant_id: tenant.id, id: key.id }).update({ scopes: ['tickets:read'] });
  await refusedPromptly(t, env.app, key.key, '/users', 403, 'the narrowed key');
  await db('users').where({ tenant_id: tenant.id, id: user.id }).update({ active: false });
  await refusedPromptly(t, env.app, key.key, '/auth/me', 401, 'the deactivated user');

  const reader = await userFixture(env, tenant.id, 'agent');
  const role = (await call(env, 'POST', '/roles', { token: admin, body: { name: 'Reader' } })).json();
  await call(env, 'PUT', `/roles/${role.id}/permissions`, { token: admin, body: { users: ['list', 'view'] } });
  await call(env, 'PATCH', `/users/${reader.id}/role`, { token: admin, body: { role: 'Reader' } });
  t.equal(await status(env.app, reader.token, '/users'), 200, 'cached');
  await db('roles').where({ tenant_id: tenant.id, id: role.id }).update({ permissions: JSON.stringify({ tickets: ['list'] }) });
  await refusedPromptly(t, env.app, reader.token, '/users', 403, 'the narrowed custom role');
});

/** A change no trigger announces: what a lost notification would look like. */
async function unannounced(db: Knex, table: string, change: (trx: Knex.Transaction) => Promise<unknown>): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw(`ALTER TABLE ${table} DISABLE TRIGGER ${table}_credentials_upd`);
    await change(trx);
    await trx.raw(`ALTER TABLE ${table} ENABLE TRIGGER ${table}_credentials_upd`);
  });
}

t.test('a missed notification lasts until the TTL at the latest', async (t) => {
  const { env, tenant, advance } = await cachedApp(t);
  const session = (await userFixture(env, tenant.id, 'agent')).token;
  t.equal(await status(env.app, session), 200, 'cached');
  await unannounced(env.deps.db, 'sessions', (trx) => trx('sessions').where({ tenant_id: tenant.id }).update({ revoked_at: new Date() }));
  advance(TTL_MS);
  t.equal(await status(env.app, session), 401, 'refused once the entry is a TTL old');
});

t.test('while LISTEN is lost nothing is answered from memory', async (t) => {
  const { env, tenant } = await cachedApp(t);
  const session = (await userFixture(env, tenant.id, 'agent')).token;
  t.equal(await status(env.app, session), 200, 'cached');
  const pid = env.deps.events.backendPid;
  await env.deps.db.raw('SELECT pg_terminate_backend(?)', [pid]);
  t.ok(await until('the loss to be noticed', () => env.deps.events.backendPid !== pid, 5000), 'the listener noticed the loss');
  // Made while nobody listens (or unannounced, as a notification sent in the gap would be lost).
  await unannounced(env.deps.db, 'sessions', (trx) => trx('sessions').where({ tenant_id: tenant.id }).update({ revoked_at: new Date() }));
  t.equal(await status(env.app, session), 401, 'not answered from memory meanwhile');
  t.ok(await until('LISTEN again', () => env.deps.credentials.active, 10_000), 'the cache is used again once LISTEN is back');
  t.equal(await status(env.app, session), 401, 'but what it held before the loss is gone');
});

t.test('a cached session is refused once it expires', async (t) => {
  const { env, tenant, now, advance } = await cachedApp(t);
  const agent = await userFixture(env, tenant.id, 'agent');
  // A session created a day ago less two seconds: it expires two seconds from now.
  const createdAt = new Date(now().getTime() - SESSION_TTL_SECONDS * 1000 + 2000);
  const session = await inTransaction(env.deps, { tenantId: tenant.id, actor: CLI_ACTOR, now: createdAt }, (ctx) => createSession(ctx, agent.id));
  t.equal(await status(env.app, session.token), 200, 'cached');
  t.equal(await status(env.app, session.token), 200, 'still valid');
  advance(3000);
  t.equal(await status(env.app, session.token), 401, 'refused after its expiry, though the entry is seconds old');
});
