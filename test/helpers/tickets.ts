/** Ticket desk fixtures for the tickets and vocab tests. */
import { call, type TestEnv } from './app.js';

/** Vocabulary ids of a tenant by key: `(await vocab(env, token)).status.open`. */
export async function vocab(env: TestEnv, token: string) {
  const byKey = (rows: Array<{ key: string; id: string }>) => Object.fromEntries(rows.map((r) => [r.key, r.id])) as Record<string, string>;
  return {
    status: byKey((await call(env, 'GET', '/meta/statuses', { token })).json().data),
    priority: byKey((await call(env, 'GET', '/meta/priorities', { token })).json().data),
  };
}

/** Opens a ticket as `token` and answers its JSON (fails loudly otherwise). */
export async function openTicket(env: TestEnv, token: string, body: Record<string, unknown>) {
  const res = await call(env, 'POST', '/tickets', { token, body: { subject: 'Help', body: 'Please help', ...body } });
  if (res.statusCode !== 201) throw new Error(`POST /tickets answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

export const count = async (env: TestEnv, table: string, tenantId: string) =>
  Number((await env.deps.db(table).where({ tenant_id: tenantId }).count({ n: '*' }))[0]!.n);
