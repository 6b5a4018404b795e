import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { errors } from '../../src/core/errors.js';

/**
 * Fixed one-minute windows per caller (CONTRACT §3): per credential for signed-in calls, per IP for
 * anonymous ones. Every response carries X-RateLimit-Limit / -Remaining / -Reset (epoch seconds).
 * Counters live in Redis when REDIS_URL is set (shared by all daemons), else in this process.
 * If Redis fails the request is let through: an outage of the cache must not take the API down.
 */
export interface RateLimitStore {
  /** Adds one hit to `key` in the window ending at `resetAt` (epoch s) and returns the count. */
  hit(key: string, resetAt: number): Promise<number>;
}

export function memoryStore(): RateLimitStore {
  const counters = new Map<string, { resetAt: number; count: number }>();
  let lastSweep = 0;
  return {
    async hit(key, resetAt) {
      const nowSec = Math.floor(Date.now() / 1000);
      if (nowSec - lastSweep > 60) {
        for (const [k, v] of counters) if (v.resetAt <= nowSec) counters.delete(k);
        lastSweep = nowSec;
      }
      const entry = counters.get(key);
      if (!entry || entry.resetAt !== resetAt) {
        counters.set(key, { resetAt, count: 1 });
        return 1;
      }
      entry.count += 1;
      return entry.count;
    },
  };
}

export function redisStore(redis: Redis): RateLimitStore {
  return {
    async hit(key, resetAt) {
      const k = `helpdesk:rl:${key}:${resetAt}`;
      const [[, count]] = (await redis.multi().incr(k).expireat(k, resetAt + 5).exec()) as [[unknown, number]];
      return count;
    },
  };
}

export type RequestCounter = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** Counts the request, sets the X-RateLimit-* headers and refuses it (429) over the limit. */
export function requestCounter(options: { limit: number; store: RateLimitStore }): RequestCounter {
  return async (request, reply) => {
    const nowSec = Math.floor(request.identity.now.getTime() / 1000);
    const resetAt = nowSec - (nowSec % 60) + 60;
    const actor = request.identity?.actor;
    const key = actor ? `c:${actor.apiKeyId ?? actor.sessionId}` : `ip:${request.ip}`;
    let count = 0;
    try {
      count = await options.store.hit(key, resetAt);
    } catch (error) {
      request.log.warn({ err: error }, 'rate-limit store unavailable; request not counted');
    }
    reply.header('X-RateLimit-Limit', options.limit);
    reply.header('X-RateLimit-Remaining', Math.max(0, options.limit - count));
    reply.header('X-RateLimit-Reset', resetAt);
    if (count > options.limit) throw errors.rateLimited(resetAt - nowSec);
  };
}

export function rateLimitPlugin(app: FastifyInstance, count: RequestCounter): void {
  app.addHook('onRequest', count);
}
