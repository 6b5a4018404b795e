/**
 * Bulk seeding for the benchmark suite: one tenant with N tickets, written in SQL with
 * `INSERT … SELECT generate_series` (no row passes through Node), so a million tickets take minutes.
 *
 * What a seeded ticket carries, all consistent with what the service would have written:
 * - a requester among N/100 customers (users + user_emails through the table's trigger), an
 *   assignee among 20 agents once the ticket has left `new`;
 * - a status and priority drawn with a fixed, skewed distribution (most tickets closed, most
 *   priorities normal), reproducible because it is a hash of the ticket number, not random();
 * - ticket_number 1…N and the tenant's counter at N, so the next create gets N + 1;
 * - tags from the tenant's tag vocabulary, values of two custom fields (a select and a text);
 * - one customer message, plus an agent reply for every ticket past `new` (first_responded_at is
 *   that reply's time; resolved_at / closed_at are set for resolved and closed tickets);
 * - no SLA state: the seeded tickets are history, as after an import; tickets the benchmark
 *   creates get theirs from the SLA engine like any other.
 *
 * The secondary indexes of tickets, messages and the reports' reply gaps are dropped for the load and rebuilt after it
 * (one sort per index instead of a million B-tree and GIN insertions), with the definitions read
 * from pg_indexes, so the rebuilt indexes are exactly the migrated ones.
 */
import type { Knex } from 'knex';
import type { Deps } from '../../src/core/context.js';
import { CLI_ACTOR } from '../../src/core/context.js';
import { inTransaction } from '../../src/db/transaction.js';
import { createTenant } from '../../src/tenants/service.js';
import { ticketNumberSequence } from '../../src/tickets/numbering.js';
import { issueApiKey } from '../../src/auth/api-key-store.js';
import { createEndpoint } from '../../src/webhooks/endpoints.js';

const BENCH_TENANT = 'bench';
const BATCH = 100_000;
const AGENTS = 20;

export interface SeedInfo {
  tenant_id: string;
  admin_id: string;
  tickets: number;
  seeded_at: string;
  seed_seconds: number;
}

const log = (message: string) => console.log(`  seed: ${message}`);

/** The database the suite keeps between runs for a seed of `tickets` tickets. */
export const suiteDatabaseName = (tickets: number) => `helpdesk_bench_${tickets}`;

/** The bench database's record of its own seed, or null when it was never completed. */
export async function readSeedInfo(db: Knex): Promise<SeedInfo | null> {
  const exists = await db.raw(`select to_regclass('public.bench_seed') as t`);
  if (!exists.rows[0].t) return null;
  const row = await db('bench_seed').first();
  return row ? { ...row, tickets: Number(row.tickets), seed_seconds: Number(row.seed_seconds) } : null;
}

export async function seed(deps: Deps, tickets: number): Promise<SeedInfo> {
  const started = Date.now();
  const db = deps.db;
  const now = new Date();
  const created = await createTenant(deps, {
    slug: BENCH_TENANT, name: 'Benchmark', adminEmail: 'admin@bench.example.com', adminPassword: 'benchmark password 123',
  }, CLI_ACTOR, now);
  const tenantId = created.tenant.id;
  const adminId = created.admin.id;
  const customers = Math.max(50, Math.floor(tickets / 100));

  await db.raw(`
    INSERT INTO users (tenant_id, id, email, name, role, created_at, updated_at)
    SELECT __T__, gen_random_uuid(), 'agent' || g || '@bench.example.com', 'Agent ' || g, 'agent', now(), now()
      FROM generate_series(1, __AGENTS__) g;
    INSERT INTO users (tenant_id, id, email, name, role, created_at, updated_at)
    SELECT __T__, gen_random_uuid(), 'customer' || g || '@bench.example.net', 'Customer ' || g, 'customer', now(), now()
      FROM generate_series(1, __CUSTOMERS__) g;
    INSERT INTO custom_fields (tenant_id, id, key, label, kind, options, position, created_at, updated_at) VALUES
      (__T__, gen_random_uuid(), 'plan', 'Plan', 'select', '{free,pro,enterprise}', 1, now(), now()),
      (__T__, gen_random_uuid(), 'account_ref', 'Account reference', 'text', '{}', 2, now(), now());
    INSERT INTO tags (tenant_id, id, name, color, created_at, updated_at)
    SELECT __T__, gen_random_uuid(), name, '#3366cc', now(), now()
      FROM unnest('{billing,bug,feature,vip,refund,outage}'::text[]) name;
  `.replace(/__AGENTS__/g, String(AGENTS)).replace(/__CUSTOMERS__/g, String(customers)).replace(/__T__/g, `'${tenantId}'::uuid`));
  log(`tenant, ${AGENTS} agents, ${customers} customers, custom fields and tags`);

  // Drop the secondary indexes of the bulk tables; rebuilt below from the same definitions.
  const { rows: indexes } = await db.raw<{ rows: Array<{ indexname: string; indexdef: string }> }>(`
    SELECT i.indexname, i.indexdef FROM pg_indexes i
     WHERE i.schemaname = 'public' AND i.tablename IN ('tickets', 'messages', 'report_reply_gaps')
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`);
  for (const index of indexes) await db.raw(`DROP INDEX ${index.indexname}`);

  // Tickets and their messages in one statement per batch (the messages read the inserted rows).
  const ticketsSql = `
    WITH s AS (SELECT array_agg(id ORDER BY position) AS ids FROM statuses WHERE tenant_id = __T__),
         p AS (SELECT array_agg(id ORDER BY position) AS ids FROM priorities WHERE tenant_id = __T__),
         c AS (SELECT array_agg(id ORDER BY email) AS ids FROM users WHERE tenant_id = __T__ AND role = 'customer'),
         a AS (SELECT array_agg(id ORDER BY email) AS ids FROM users WHERE tenant_id = __T__ AND role = 'agent'),
         g AS (
           SELECT n,
                  ((hashint4(n)::bigint & 2147483647)::int) % 100 AS hs, ((hashint4(n + 1000000007)::bigint & 2147483647)::int) % 100 AS hp,
                  ((hashint4(n * 7 + 3)::bigint & 2147483647)::int) AS h,
                  now() - interval '365 days' + (n * (interval '365 days' / __TOTAL__)) AS created
             FROM generate_series(__FROM__, __TO__) n
         ),
         r AS (
           SELECT g.*,
                  CASE WHEN hs < 5 THEN 1 WHEN hs < 30 THEN 2 WHEN hs < 38 THEN 3 WHEN hs < 40 THEN 4 WHEN hs < 60 THEN 5 ELSE 6 END AS si,
                  CASE WHEN hp < 5 THEN 1 WHEN hp < 25 THEN 2 WHEN hp < 85 THEN 3 ELSE 4 END AS pi,
                  least(created + (h % 4320) * interval '1 minute', now()) AS updated
             FROM g
         )
    , ins AS (
    INSERT INTO tickets (tenant_id, id, ticket_number, subject, status_id, priority_id, requester_id, assigned_agent_id,
                         channel, tags, custom_fields, first_responded_at, resolved_at, closed_at, created_at, updated_at)
    SELECT __T__, gen_random_uuid(), n,
           (ARRAY['Cannot sign in', 'Question about my invoice', 'Export fails with an error', 'Feature request: dark mode',
                  'Password reset mail never arrives', 'Refund for a double charge', 'The app is slow today', 'How do I add a colleague?'])[1 + h % 8]
             || ' (#' || n || ')',
           s.ids[si], p.ids[pi], c.ids[1 + h % cardinality(c.ids)],
           CASE WHEN si = 1 THEN NULL ELSE a.ids[1 + (h / 7) % cardinality(a.ids)] END,
           (ARRAY['email', 'webform', 'api', 'webchat'])[1 + (h / 11) % 4],
           CASE (h / 13) % 10 WHEN 0 THEN '{billing}'::text[] WHEN 1 THEN '{bug}' WHEN 2 THEN '{bug,outage}' WHEN 3 THEN '{feature}'
                              WHEN 4 THEN '{vip,billing}' WHEN 5 THEN '{refund}' ELSE '{}' END,
           jsonb_build_object('plan', (ARRAY['free', 'pro', 'enterprise'])[1 + (h / 17) % 3], 'account_ref', 'ACC-' || ((h / 19) % 50000)),
           CASE WHEN si = 1 THEN NULL ELSE least(created + ((h / 23) % 240 + 1) * interval '1 minute', updated) END,
           CASE WHEN si >= 5 THEN updated END,
           CASE WHEN si = 6 THEN updated END,
           created, updated
      FROM r, s, p, c, a
    RETURNING tenant_id, id, subject, requester_id, assigned_agent_id, channel, first_responded_at, created_at
    )
    INSERT INTO messages (tenant_id, id, ticket_id, body, is_private, author_id, author_name, is_agent, channel, created_at)
    SELECT t.tenant_id, gen_random_uuid(), t.id,
           'Hello, ' || t.subject || '. It started this morning and happens every time; what can I do?',
           false, t.requester_id, u.name, false, t.channel, t.created_at
      FROM ins t JOIN users u ON u.tenant_id = t.tenant_id AND u.id = t.requester_id
    UNION ALL
    SELECT t.tenant_id, gen_random_uuid(), t.id,
           'Thanks for writing in. We looked at your account and found the cause; it is fixed now, please try again.',
           false, t.assigned_agent_id, u.name, true, t.channel, t.first_responded_at
      FROM ins t JOIN users u ON u.tenant_id = t.tenant_id AND u.id = t.assigned_agent_id
     WHERE t.first_responded_at IS NOT NULL`;

  for (let from = 1; from <= tickets; from += BATCH) {
    const to = Math.min(tickets, from + BATCH - 1);
    const fill = (sql: string) => sql.replace(/__TOTAL__/g, String(tickets)).replace(/__FROM__/g, String(from)).replace(/__TO__/g, String(to))
      .replace(/__T__/g, `'${tenantId}'::uuid`);
    await db.transaction(async (trx) => {
      // The generated rows reference only rows that exist (statuses, priorities, users of this
      // tenant), so the per-row foreign-key triggers are skipped for the load (superuser only).
      await trx.raw('SET LOCAL session_replication_role = replica');
      await trx.raw('SET LOCAL synchronous_commit = off');
      await trx.raw(fill(ticketsSql));
    });
    log(`tickets ${to.toLocaleString('en')} / ${tickets.toLocaleString('en')} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  // The tenant's numbers continue after the seeded ones (src/tickets/numbering.ts).
  await db.raw('SELECT setval(?::regclass, ?)', [ticketNumberSequence(tenantId), tickets]);

  // The load skipped the triggers, so the reports' reply gaps are written here as the reply-gap
  // trigger would have: one row per public staff reply (each seeded ticket has at most one).
  await db.raw(`
    INSERT INTO report_reply_gaps (tenant_id, message_id, ticket_id, author_id, at, prev_at, prev_author_at, earlier_hours)
    SELECT m.tenant_id, m.id, m.ticket_id, m.author_id, m.created_at,
           lag(m.created_at) OVER (PARTITION BY m.tenant_id, m.ticket_id ORDER BY m.created_at, m.id),
           lag(m.created_at) OVER (PARTITION BY m.tenant_id, m.ticket_id, m.author_id ORDER BY m.created_at, m.id),
           coalesce(bit_or(report_hour_bit(m.created_at)) OVER (PARTITION BY m.tenant_id, m.ticket_id ORDER BY m.created_at, m.id
                                                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), repeat('0', 168)::bit(168))
      FROM messages m WHERE m.tenant_id = ? AND m.is_agent AND NOT m.is_private`, [tenantId]);
  log(`reply gaps of the reports (${((Date.now() - started) / 1000).toFixed(0)} s)`);

  await db.raw(`SET maintenance_work_mem = '256MB'`);
  for (const index of indexes) await db.raw(index.indexdef);
  log(`${indexes.length} indexes rebuilt (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  await db.raw('VACUUM (ANALYZE) tickets, messages, report_reply_gaps, users, user_emails');

  // Three endpoints subscribed to ticket creation and messages: every create and reply writes three
  // outbox rows. The daemon runs without jobs during the benchmark, so they are never sent.
  await inTransaction(deps, { tenantId, actor: CLI_ACTOR, now }, async (ctx) => {
    for (let i = 1; i <= 3; i++) {
      await createEndpoint(ctx, { name: `Bench receiver ${i}`, url: `http://127.0.0.1:9/hooks/${i}`, events: ['ticket.created', 'ticket.message_created'] });
    }
  });

  const info: SeedInfo = {
    tenant_id: tenantId, admin_id: adminId, tickets, seeded_at: new Date().toISOString(), seed_seconds: Math.round((Date.now() - started) / 1000),
  };
  await db.raw(`CREATE TABLE bench_seed (tenant_id uuid, admin_id uuid, tickets integer, seeded_at text, seed_seconds integer)`);
  await db('bench_seed').insert(info);
  log(`done in ${info.seed_seconds} s`);
  return info;
}

/** A fresh API key of the bench administrator (keys are shown once, so every run issues its own). */
export async function benchApiKey(deps: Deps, info: SeedInfo): Promise<string> {
  return inTransaction(deps, { tenantId: info.tenant_id, actor: CLI_ACTOR, now: new Date() }, async (ctx) => {
    const { key } = await issueApiKey(ctx, { userId: info.admin_id, name: `Benchmark ${new Date().toISOString()}`, scopes: ['admin'], expiresAt: null });
    return key;
  });
}
