import { createHash } from 'node:crypto';

/**
 * Server-side prepared statements for the statements every create and reply repeats.
 *
 * knex sends each statement unnamed, so PostgreSQL parses and plans it on every execution. A
 * single-row read of `tickets` costs ~0.2 ms of planning against ~0.04 ms of execution, because the
 * planner weighs each of the table's indexes; a create spent about a third of its database time
 * planning (docs/performance.md). A named statement is parsed once per connection, and after five
 * executions PostgreSQL keeps a generic plan when it costs no more than the custom ones.
 *
 * Only statements marked with `prepared()` are named: lookups by key, the inserts every write
 * repeats (an INSERT … VALUES has no plan to choose), and reads of all of a tenant's rows of a small
 * table (its custom fields, its staff with push subscriptions), whose generic plan is the custom
 * one. A list with skewed filters stays unnamed, planned for its own values.
 *
 * The name is a digest of the SQL text, so one text is one statement on each connection, and a
 * query whose text varies (an IN list of another length) is simply another statement.
 *
 * When a migration changes a table's columns under a running daemon, PostgreSQL refuses to run a
 * prepared `SELECT *` or `RETURNING *` of it ("cached plan must not change result type"). The connection that hit
 * it is then discarded by the pool, so each connection fails at most one request and the next ones
 * prepare the statement anew.
 */
/** The query option that marks a statement (read by the knex client, src/db/pg-client.ts). */
export const PREPARED_MARK = 'helpdeskPrepared';

interface WithOptions<Q> { options(options: Readonly<Record<string, unknown>>): Q }
interface WithKnexBuild<Q> { onBuildKnex(build: (query: WithOptions<unknown>) => void): Q }

/** The query option that asks for one generic plan (src/db/generic-plan.ts). */
export const GENERIC_PLAN_MARK = 'helpdeskGenericPlan';

/**
 * Marks a knex or objection query (or a knex raw) to run as a named prepared statement.
 * `plan: 'generic'`: planned once per connection, for a statement whose best plan is the same for
 * every value (src/db/generic-plan.ts); only for such statements.
 */
export function prepared<Q>(query: Q & (WithOptions<Q> | WithKnexBuild<Q>), options: { plan?: 'generic' } = {}): Q {
  const marks = options.plan === 'generic' ? { [PREPARED_MARK]: true, [GENERIC_PLAN_MARK]: true } : { [PREPARED_MARK]: true };
  if ('onBuildKnex' in query && typeof query.onBuildKnex === 'function') {
    return query.onBuildKnex((knexQuery) => { knexQuery.options(marks); });
  }
  return (query as WithOptions<Q>).options(marks);
}

const names = new Map<string, string>();
const MAX_NAMES = 2000;

/** The statement name of a SQL text (PostgreSQL allows 63 bytes). */
export function statementName(sql: string): string {
  let name = names.get(sql);
  if (!name) {
    // The marked texts are few (a fixed set of code paths); the bound only guards against a leak.
    if (names.size >= MAX_NAMES) names.clear();
    name = `hd_${createHash('sha256').update(sql).digest('base64url').slice(0, 32)}`;
    names.set(sql, name);
  }
  return name;
}
