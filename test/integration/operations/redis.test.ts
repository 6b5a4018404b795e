import t from 'tap';
import { Redis } from 'ioredis';
import { call, testApp } from '../../helpers/app.js';

// Redis is optional (REDIS_URL). When configured, readiness includes it and rate-limit counters
// are shared through it, so two daemons count one caller together.
const REDIS_URL = process.env.HELPDESK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

async function redisAvailable(): Promise<boolean> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

t.test('readyz reports an unreachable cache as not ready', async (t) => {
  const env = await testApp(t, { redisUrl: 'redis://127.0.0.1:1/0' });
  const res = await call(env, 'GET', '/readyz');
  t.equal(res.statusCode, 503);
  t.equal(res.json().code, 'not_ready');
  t.equal(res.json().details.checks.database, 'ok');
  t.not(res.json().details.checks.cache, 'ok');
  const health = await call(env, 'GET', '/healthz');
  t.equal(health.statusCode, 200, 'liveness does not depend on the cache; rate limiting fails open');
});

const available = await redisAvailable();
const skip = available ? false : `no Redis at ${REDIS_URL}: set HELPDESK_TEST_REDIS_URL to run this test`;

t.test('with Redis, readiness and shared rate-limit counters', { skip }, async (t) => {
  const env1 = await testApp(t, { redisUrl: REDIS_URL, rateLimitPerMin: 4 });
  const env2 = await testApp(t, { redisUrl: REDIS_URL, rateLimitPerMin: 4 });
  const ready = await call(env1, 'GET', '/readyz');
  t.equal(ready.statusCode, 200);
  t.same(ready.json().checks, { database: 'ok', cache: 'ok' });
  // One anonymous caller (same IP) spread over two daemons shares one budget. Skip to a fresh
  // window if this one is about to end, so the five calls land in the same minute.
  const secondsLeft = 60 - (Math.floor(Date.now() / 1000) % 60);
  if (secondsLeft < 3) await new Promise((r) => setTimeout(r, secondsLeft * 1000 + 100));
  const ip = `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
  const statuses = [];
  for (const env of [env1, env2, env1, env2, env1]) {
    const res = await env.app.inject({ method: 'GET', url: '/api/v1/healthz', remoteAddress: ip });
    statuses.push(res.statusCode);
  }
  t.same(statuses, [200, 200, 200, 200, 429]);
});
