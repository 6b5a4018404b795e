import { isParsed, type StatementConfig } from './query-after-prelude.js';

/**
 * One plan for every execution of a statement whose best plan does not depend on its values.
 *
 * PostgreSQL plans a prepared statement anew for its values ("custom plans") unless the generic
 * plan's estimated cost is no higher than theirs. For a ticket list whose filters and sort one
 * index serves exactly, the plan is the same walk of that index whatever the values, yet the
 * generic plan is estimated dearer (its filters at average selectivity), so every page was planned
 * again: about half of the list's database time, since the planner weighs each of the table's
 * indexes (docs/performance.md).
 *
 * A statement marked with `prepared(query, { plan: 'generic' })` therefore runs behind the prelude
 * below (query-after-prelude.ts): `set_config(…, true)` sets `plan_cache_mode` for the implicit
 * transaction that ends at the statement's Sync, so the statement is planned once per connection
 * and the setting is gone before anything else runs on the connection, whether the statement
 * succeeded or failed. Only outside a transaction (inside one the setting would last to its end),
 * and only once the connection has parsed the statement (its first execution plans as usual).
 */
export const FORCE_GENERIC_PLAN = "SELECT 1 WHERE set_config('plan_cache_mode', 'force_generic_plan', true) IS NULL";

/** A pg connection as the knex client sees it. */
export interface GenericPlanConnection {
  getTransactionStatus(): string | null;
  connection: { parsedStatements: Record<string, string> };
}

/** Whether a statement marked for a generic plan can have one now (see the module comment). */
export function canPlanGeneric(connection: GenericPlanConnection, config: StatementConfig): boolean {
  return isParsed(connection, config) && connection.getTransactionStatus() === 'I';
}
