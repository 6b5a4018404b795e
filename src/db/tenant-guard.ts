import type { Knex } from 'knex';

/**
 * A safety net for rule 2, switched on in tests: it watches every SQL statement and records those
 * that touch a tenant-owned table (one with a tenant_id column) without mentioning tenant_id.
 * Deliberate cross-tenant reads (resolving a bearer token, a job walking all tenants) mark
 * themselves with `.comment('cross-tenant: <why>')`.
 */
export interface TenantGuard {
  violations: string[];
  stop(): void;
}

export async function installTenantGuard(db: Knex): Promise<TenantGuard> {
  const rows = await db('information_schema.columns')
    .where({ column_name: 'tenant_id', table_schema: 'public' })
    .select('table_name');
  const tables = rows.map((r: { table_name: string }) => r.table_name);
  const pattern = new RegExp(`(?:from|into|update|join)\\s+"?(${tables.join('|')})"?(?:\\s|$)`, 'i');
  const violations: string[] = [];
  const listener = (query: { sql: string }) => {
    const sql = query.sql;
    if (!pattern.test(sql)) return;
    if (/tenant_id/i.test(sql) || /\/\* cross-tenant:/.test(sql)) return;
    violations.push(sql);
  };
  db.on('query', listener);
  return { violations, stop: () => db.removeListener('query', listener) };
}
