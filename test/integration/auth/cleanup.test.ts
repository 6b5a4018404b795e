import t from 'tap';
import { testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { CLI_ACTOR } from '../../../src/core/context.js';
import { uuidv7 } from '../../../src/core/ids.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { purgeExpiredCredentials } from '../../../src/auth/cleanup.js';

t.test('purgeExpiredCredentials removes only dead credentials of its tenant', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const user = await userFixture(env, tenant.id, 'agent');
  const now = new Date('2026-11-22T12:00:00.000Z');
  const ago = (hours: number) => new Date(now.getTime() - hours * 3600_000);
  const db = env.deps.db;

  const session = (tenantId: string, userId: string, id: string, expires: Date, revoked: Date | null) =>
    db('sessions').insert({ tenant_id: tenantId, id, user_id: userId, token_hash: id, created_at: ago(400), expires_at: expires, revoked_at: revoked });
  const ids = { oldExpired: uuidv7(), oldRevoked: uuidv7(), recentRevoked: uuidv7(), live: uuidv7(), otherTenant: uuidv7() };
  await session(tenant.id, user.id, ids.oldExpired, ago(8 * 24), null);
  await session(tenant.id, user.id, ids.oldRevoked, ago(-24), ago(8 * 24));
  await session(tenant.id, user.id, ids.recentRevoked, ago(-24), ago(6 * 24));
  await session(tenant.id, user.id, ids.live, ago(-24), null);
  await session(other.id, other.admin.id, ids.otherTenant, ago(30 * 24), null);

  const token = (tenantId: string, userId: string, expires: Date, used: Date | null) =>
    db('user_tokens').insert({ tenant_id: tenantId, id: uuidv7(), user_id: userId, purpose: 'password_reset', token_hash: uuidv7(), created_at: ago(100), expires_at: expires, used_at: used });
  await token(tenant.id, user.id, ago(25), null);          // expired a day ago: purged
  await token(tenant.id, user.id, ago(-1), ago(25));        // used a day ago: purged
  await token(tenant.id, user.id, ago(2), null);            // expired recently: kept
  await token(tenant.id, user.id, ago(-1), null);           // live: kept
  await token(other.id, other.admin.id, ago(48), null);     // other tenant: kept

  const challenge = (expires: Date, used: Date | null) =>
    db('login_challenges').insert({ tenant_id: tenant.id, id: uuidv7(), user_id: user.id, token_hash: uuidv7(), created_at: ago(30), expires_at: expires, used_at: used });
  await challenge(ago(29), null);
  await challenge(ago(1), ago(1));

  const attempt = (tenantId: string, at: Date) =>
    db('login_attempts').insert({ tenant_id: tenantId, id: uuidv7(), email: 'a@example.com', ip: null, succeeded: false, created_at: at });
  await attempt(tenant.id, ago(25));
  await attempt(tenant.id, ago(23));
  await attempt(other.id, ago(48));

  const sessionsBefore = await db('sessions').where({ tenant_id: tenant.id }).count('* as n').first();
  const counts = await inTransaction(env.deps, { tenantId: tenant.id, actor: CLI_ACTOR, now }, (ctx) => purgeExpiredCredentials(ctx));
  t.same(counts, { sessions: 2, user_tokens: 2, login_challenges: 1, login_attempts: 1 });

  const remaining = await db('sessions').comment('cross-tenant: test inspects both tenants').whereIn('id', Object.values(ids)).pluck('id');
  t.same(remaining.sort(), [ids.recentRevoked, ids.live, ids.otherTenant].sort());
  t.equal(Number(sessionsBefore!.n) - 2, Number((await db('sessions').where({ tenant_id: tenant.id }).count('* as n').first())!.n));
  t.equal((await db('user_tokens').where({ tenant_id: other.id })).length, 1, "another tenant's rows are untouched");
  t.equal((await db('login_attempts').where({ tenant_id: other.id })).length, 1);

  const again = await inTransaction(env.deps, { tenantId: tenant.id, actor: CLI_ACTOR, now }, (ctx) => purgeExpiredCredentials(ctx));
  t.same(again, { sessions: 0, user_tokens: 0, login_challenges: 0, login_attempts: 0 }, 'idempotent');
  t.same(env.guard.violations, [], 'tenant-scoped');
});
