import type { WithInsert } from './insert-statement.js';
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

/** Each companion that has rows as a `WITH companion_<n>` insert, every row ctx's tenant's (`tenantRow`). */
export function companionInserts(companions: readonly CompanionRows[], ctx: { tenantId: string; now: Date }): WithInsert[] {
  return companions.filter((companion) => companion.rows.length).map((companion, index) => ({
    name: `companion_${index}`,
    table: companion.table,
    rows: companion.rows.map((row) => tenantRow(ctx, row)),
  }));
}
