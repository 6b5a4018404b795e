import type { Deps } from '../core/context.js';
import { errors } from '../core/errors.js';

/**
 * Readiness (CONTRACT §10): the database answers, and the cache too when REDIS_URL is set. Each
 * check has a short deadline so a hung dependency makes the probe fail rather than hang.
 */
const DEADLINE_MS = 2000;

function within(check: Promise<unknown>): Promise<string> {
  return Promise.race([
    check.then(() => 'ok', () => 'failed'),
    new Promise<string>((resolve) => setTimeout(() => resolve('timeout'), DEADLINE_MS).unref()),
  ]);
}

export async function checkReadiness(deps: Pick<Deps, 'db' | 'redis'>): Promise<Record<string, string>> {
  const checks: Record<string, string> = { database: await within(deps.db.raw('select 1')) };
  if (deps.redis) checks.cache = await within(deps.redis.ping());
  if (Object.values(checks).some((v) => v !== 'ok')) throw errors.notReady({ checks });
  return checks;
}
