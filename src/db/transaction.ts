import type { Actor, Ctx, Deps } from '../core/context.js';

export interface ContextInput {
  tenantId: string;
  actor: Actor;
  now: Date;
  requestId?: string | null;
  ip?: string | null;
  /** See Ctx.quiet: the legacy import's marker. */
  quiet?: boolean;
}

/**
 * Runs `fn` in one database transaction (ARCHITECTURE rule 3): the change and all its consequences
 * (audit rows, outbox rows) commit together or not at all. Effects registered with `afterCommit`
 * run only after a successful commit; their failures are logged, never undo the change.
 */
export async function inTransaction<T>(deps: Deps, input: ContextInput, fn: (ctx: Ctx) => Promise<T>): Promise<T> {
  const effects: Array<() => Promise<void> | void> = [];
  const result = await deps.db.transaction(async (trx) => {
    const ctx: Ctx = {
      tenantId: input.tenantId,
      actor: input.actor,
      trx,
      now: input.now,
      deps,
      requestId: input.requestId ?? null,
      ip: input.ip ?? null,
      afterCommit: (effect) => effects.push(effect),
      ...(input.quiet ? { quiet: true } : {}),
    };
    return fn(ctx);
  });
  for (const effect of effects) {
    try {
      await effect();
    } catch (error) {
      deps.log.error({ err: error }, 'after-commit effect failed');
    }
  }
  return result;
}

/** A read-only context on the pool (no transaction); afterCommit runs effects at once. */
export function readContext(deps: Deps, input: ContextInput): Ctx {
  return {
    tenantId: input.tenantId,
    actor: input.actor,
    trx: deps.db,
    now: input.now,
    deps,
    requestId: input.requestId ?? null,
    ip: input.ip ?? null,
    afterCommit: (effect) => void Promise.resolve().then(effect).catch((error) => deps.log.error({ err: error }, 'effect failed')),
  };
}
