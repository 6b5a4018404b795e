import { Model, type ModelClass, type QueryBuilderType } from 'objection';
import type { Ctx } from '../core/context.js';
import { prepared } from './prepared.js';
import { companionInserts, type CompanionRows } from './companion-rows.js';
import { insertStatement } from './insert-statement.js';
import { scoped, tenantRow } from './tenant-scope.js';

/** What a tenant-scoped query needs from a context. */
export type Scope = Pick<Ctx, 'trx' | 'tenantId'>;

/**
 * The one base of every tenant-owned domain record (ARCHITECTURE rule 2, docs/architecture.md
 * "Data access"). Keys are composite `(tenant_id, id)`, relations join on both columns, and a
 * service reaches a model only through `Model.scoped(ctx)`: the query runs in the context's
 * transaction and is restricted to the context's tenant. Column names stay snake_case, as in the
 * database and the API, so a row needs no mapping on its way out.
 */
export class TenantModel extends Model {
  declare tenant_id: string;
  declare id: string;

  static override get idColumn(): string | string[] {
    return ['tenant_id', 'id'];
  }

  /** Every query of a service starts here: this tenant's rows, inside ctx's transaction. */
  static scoped<M extends TenantModel>(this: TenantModelClass<M>, ctx: Scope): QueryBuilderType<M> {
    return (this as unknown as ModelClass<M>).query(ctx.trx).where(`${this.tableName}.tenant_id`, ctx.tenantId) as QueryBuilderType<M>;
  }

  /** One row of this tenant by id, or undefined (another tenant's id is simply not found). */
  static async findIn<M extends TenantModel>(this: TenantModelClass<M>, ctx: Scope, id: string): Promise<M | undefined> {
    // A lookup by key: one plan fits every id, so the statement is prepared once per connection.
    // Built with knex rather than objection (see insertIn below).
    const row = await prepared(scoped(ctx, this.tableName).where(`${this.tableName}.id`, id).first());
    return row ? (this.fromDatabaseJson(row) as M) : undefined;
  }

  /**
   * Inserts a row for ctx's tenant (a new time-ordered id unless one is given) and returns it.
   * `companions`: rows of other tables written by the same statement (src/db/companion-rows.ts),
   * for ctx's tenant, as given otherwise (no model's JSON columns), and not returned.
   *
   * Compiled once per shape (src/db/insert-statement.ts) and read back with `fromDatabaseJson`:
   * objection's query builder added ~85 µs of CPU to each insert (and ~65 µs to each findIn) for
   * nothing these statements use (docs/performance.md). The row is formatted for the database by objection's own
   * `$formatDatabaseJson` (JSON attributes as JSON text), as its insert would.
   */
  static async insertIn<M extends TenantModel>(this: TenantModelClass<M>, ctx: Scope & { now: Date }, row: Record<string, unknown>, companions: CompanionRows[] = []): Promise<M> {
    const insert = insertStatement(ctx.trx, { table: this.tableName, rows: [this.prototype.$formatDatabaseJson(tenantRow(ctx, row))] },
      companionInserts(companions, ctx), { returning: true });
    // Prepared: one text per column set, which a code path keeps; the plan of an INSERT … VALUES
    // has no choice to make, so parsing and planning it anew each time was pure cost.
    const { rows: [stored] } = await prepared(insert) as unknown as { rows: Array<Record<string, unknown>> };
    return this.fromDatabaseJson(stored!) as M;
  }
}

/**
 * Runs a select built with objection as a knex query, its rows read back as models: objection's
 * execution of a statement cost ~70 µs of CPU more than knex's (docs/performance.md). For the hot
 * lookups of the write paths; only for plain selects (no graph fetching, no `first()`: take row 0).
 */
export async function selectModels<M extends TenantModel>(model: TenantModelClass<M>, query: QueryBuilderType<M>): Promise<M[]> {
  const rows = await (query.toKnexQuery() as unknown as Promise<Array<Record<string, unknown>>>);
  return rows.map((row) => model.fromDatabaseJson(row) as M);
}

/** A concrete model class whose instances are `M` (lets the statics return the subclass). */
export type TenantModelClass<M extends TenantModel> = (new () => M) & Omit<typeof TenantModel, 'prototype'>;

/** A relation join on the composite key: `tenantJoin('tickets', 'requester_id', 'users')`. */
export function tenantJoin(fromTable: string, fromColumn: string, toTable: string, toColumn = 'id') {
  return {
    from: [`${fromTable}.tenant_id`, `${fromTable}.${fromColumn}`],
    to: [`${toTable}.tenant_id`, `${toTable}.${toColumn}`],
  };
}
