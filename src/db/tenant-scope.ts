import type { Knex } from 'knex';
import type { Ctx } from '../core/context.js';
import { uuidv7 } from '../core/ids.js';
import { pgErrorOf } from './pg-errors.js';

/**
 * Tenant isolation by construction (ARCHITECTURE rule 2): services reach tenant-owned tables only
 * through these helpers, which put `tenant_id` into every query. A query built without them on a
 * tenant-owned table is reported by the tenant guard (src/db/tenant-guard.ts) in tests.
 */
export function scoped<T extends {} = any>(ctx: Pick<Ctx, 'trx' | 'tenantId'>, table: string): Knex.QueryBuilder<T, any> {
  const alias = table.includes(' as ') ? table.split(' as ')[1]!.trim() : table;
  return ctx.trx<T>(table).where(`${alias}.tenant_id`, ctx.tenantId);
}

/** A row of ctx's tenant to insert: a new time-ordered id unless it carries one, and always ctx's tenant. */
export function tenantRow<R extends Record<string, unknown>>(ctx: { tenantId: string; now: Date }, row: R): R & { id: string; tenant_id: string } {
  return { id: uuidv7(ctx.now.getTime()), ...row, tenant_id: ctx.tenantId };
}

/** Inserts rows into a tenant-owned table with this context's tenant, returning them. */
export async function insertScoped<T = any>(ctx: Pick<Ctx, 'trx' | 'tenantId'>, table: string, rows: Record<string, unknown> | Record<string, unknown>[]): Promise<T[]> {
  const list = (Array.isArray(rows) ? rows : [rows]).map((row) => ({ ...row, tenant_id: ctx.tenantId }));
  return ctx.trx(table).insert(list).returning('*') as Promise<T[]>;
}

/** Postgres error codes the services translate into contract errors. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = pgErrorOf(error);
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}
