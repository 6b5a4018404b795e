import type { Knex } from 'knex';
import { tenantRow } from './tenant-scope.js';

/**
 * Rows of other tables that a statement writes along with its own, as data-modifying `WITH`
 * clauses: one round trip instead of one per table. PostgreSQL runs each to completion though
 * nothing reads it, and checks their foreign keys when the statement ends, so they may point at
 * the statement's own new row (an event's webhook deliveries, a new ticket's first message, a
 * reply's message written with its event).
 */
export interface CompanionRows {
  table: string;
  rows: Array<Record<string, unknown>>;
}

/** `query` with each companion that has rows added as `companion_<n>`, every row ctx's tenant's (`tenantRow`). */
export function withCompanionRows(query: Knex.QueryBuilder, companions: readonly CompanionRows[], ctx: { tenantId: string; now: Date }): Knex.QueryBuilder {
  let index = 0;
  for (const companion of companions) {
    if (!companion.rows.length) continue;
    const rows = companion.rows.map((row) => tenantRow(ctx, row));
    query = query.with(`companion_${index++}`, (qb) => qb.insert(rows).into(companion.table));
  }
  return query;
}
