/**
 * What a reply's writes cost PostgreSQL, part by part, and how much of it is round trips
 * (docs/performance.md, "Where a write's database CPU goes"). Runs on the suite's kept database
 * (`npm run bench` seeds it: a million tickets, so every index has its real size), with W
 * concurrent connections, each in a loop of transactions that are rolled back: nothing is left
 * behind, and every variant pays the same (absent) commit.
 *
 * Each transaction locks a random open ticket (`SELECT … FOR UPDATE`, as a reply does), then
 * writes what the variant names, as named prepared statements sent through pg:
 *   lock        nothing more: BEGIN, the lock, ROLLBACK
 *   update      the ticket's UPDATE (it moves `updated_at`, so every index of `tickets` is written)
 *   message     a public staff message (its triggers: the reports' marks and reply gaps)
 *   event       an event and its three webhook deliveries
 *   separate    all three, one statement each (a reply's shape today)
 *   merged      all three in one statement of data-modifying CTEs
 * It prints writes per second and CPU milliseconds per write: this process's (the client) and the
 * database server's (bench/suite/cpu.ts; its server must run on this machine).
 *
 *   node --import tsx bench/write-costs.ts
 *   BENCH_SECONDS=8 BENCH_WRITERS=16 BENCH_TICKETS=1000000 node --import tsx bench/write-costs.ts
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import pg from 'pg';
import { createDb, withDatabase } from '../src/db/connection.js';
import { databaseCpu, isLocalDatabase } from './suite/cpu.js';
import { readSeedInfo, suiteDatabaseName } from './suite/seed.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const writers = Number(process.env.BENCH_WRITERS ?? 16);
const tickets = Number(process.env.BENCH_TICKETS ?? 1_000_000);
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const url = withDatabase(adminUrl, suiteDatabaseName(tickets));

const LOCK = 'SELECT * FROM tickets WHERE tenant_id = $1 AND id = $2 FOR UPDATE';
const UPDATE = 'UPDATE tickets SET updated_at = now() WHERE tenant_id = $1 AND id = $2';
const MESSAGE_COLUMNS = '(tenant_id, id, ticket_id, body, is_private, author_id, author_name, is_agent, channel, created_at)';
const MESSAGE = `INSERT INTO messages ${MESSAGE_COLUMNS} VALUES ($1, $2, $3, 'Thanks, we are on it.', false, $4, 'Agent', true, 'api', now())`;
const EVENT_COLUMNS = '(tenant_id, id, type, subject_type, subject_id, ticket_id, data, created_at)';
const EVENT = `INSERT INTO events ${EVENT_COLUMNS} VALUES ($1, $2, 'ticket.message_created', 'ticket', $3, $3, '{"bench": true}', now())`;
const DELIVERY_COLUMNS = '(tenant_id, id, endpoint_id, event_id, event, created_at, updated_at, next_attempt_at)';
const DELIVERIES = `INSERT INTO webhook_deliveries ${DELIVERY_COLUMNS}
  SELECT $1, gen_random_uuid(), e, $2, 'ticket.message_created', now(), now(), now() FROM unnest($3::uuid[]) e`;
// The same three writes in one statement ($1 tenant, $2 message, $3 ticket, $4 author, $5 event, $6 endpoints).
const MERGED = `WITH m AS (INSERT INTO messages ${MESSAGE_COLUMNS} VALUES ($1, $2, $3, 'Thanks, we are on it.', false, $4, 'Agent', true, 'api', now())),
  u AS (UPDATE tickets SET updated_at = now() WHERE tenant_id = $1 AND id = $3),
  e AS (INSERT INTO events ${EVENT_COLUMNS} VALUES ($1, $5, 'ticket.message_created', 'ticket', $3, $3, '{"bench": true}', now()))
  INSERT INTO webhook_deliveries ${DELIVERY_COLUMNS}
  SELECT $1, gen_random_uuid(), x, $5, 'ticket.message_created', now(), now(), now() FROM unnest($6::uuid[]) x`;

const VARIANTS = ['lock', 'update', 'message', 'event', 'separate', 'merged'] as const;
type Variant = typeof VARIANTS[number];

interface Inputs { tenant: string; author: string; tickets: string[]; endpoints: string[] }

async function inputs(): Promise<Inputs> {
  const db = createDb(url, { max: 1 });
  try {
    const seed = await readSeedInfo(db).catch((error: unknown) => {
      throw new Error(`cannot read ${url}: run \`npm run bench\` first, it seeds that database (${(error as Error).message})`);
    });
    if (!seed) throw new Error(`${url} holds no completed seed: run \`npm run bench\` first`);
    const open = await db('statuses').where({ tenant_id: seed.tenant_id, key: 'open' }).first('id') as { id: string };
    const ids = await db('tickets').where({ tenant_id: seed.tenant_id, status_id: open.id }).whereRaw('ticket_number % 499 = 0').limit(2000).select('id') as Array<{ id: string }>;
    const endpoints = await db('webhook_endpoints').where({ tenant_id: seed.tenant_id }).select('id') as Array<{ id: string }>;
    return { tenant: seed.tenant_id, author: seed.admin_id, tickets: ids.map((r) => r.id), endpoints: endpoints.map((r) => r.id) };
  } finally {
    await db.destroy();
  }
}

async function writeOnce(client: pg.Client, variant: Variant, input: Inputs): Promise<void> {
  const ticket = input.tickets[Math.floor(Math.random() * input.tickets.length)]!;
  const message = randomUUID();
  const event = randomUUID();
  const run = (name: string, text: string, values: unknown[]) => client.query({ name, text, values });
  await client.query('BEGIN');
  await run('lock', LOCK, [input.tenant, ticket]);
  if (variant === 'update' || variant === 'separate') await run('update', UPDATE, [input.tenant, ticket]);
  if (variant === 'message' || variant === 'separate') await run('message', MESSAGE, [input.tenant, message, ticket, input.author]);
  if (variant === 'event' || variant === 'separate') {
    await run('event', EVENT, [input.tenant, event, ticket]);
    await run('deliveries', DELIVERIES, [input.tenant, event, input.endpoints]);
  }
  if (variant === 'merged') await run('merged', MERGED, [input.tenant, message, ticket, input.author, event, input.endpoints]);
  await client.query('ROLLBACK');
}

async function measure(variant: Variant, input: Inputs): Promise<string> {
  const clients = await Promise.all(Array.from({ length: writers }, async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return client;
  }));
  try {
    let writes = 0;
    let stop = false;
    const loop = async (client: pg.Client) => {
      while (!stop) {
        await writeOnce(client, variant, input);
        writes += 1;
      }
    };
    // One second of warm-up (prepared statements, caches), then the measured seconds.
    let timer = setTimeout(() => { stop = true; }, 1000);
    await Promise.all(clients.map(loop));
    stop = false;
    writes = 0;
    const client0 = process.cpuUsage();
    const server0 = databaseCpu();
    timer = setTimeout(() => { stop = true; }, seconds * 1000);
    await Promise.all(clients.map(loop));
    clearTimeout(timer);
    const client1 = process.cpuUsage(client0);
    const server1 = databaseCpu();
    const clientMs = ((client1.user + client1.system) / 1000) / writes;
    const serverMs = server0 === null || server1 === null ? null : ((server1 - server0) * 1000) / writes;
    return `| ${variant} | ${Math.round(writes / seconds)} | ${clientMs.toFixed(2)} | ${serverMs === null ? 'n/a' : serverMs.toFixed(2)} |`;
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}

async function main(): Promise<void> {
  if (!isLocalDatabase(url)) console.log('The database server is not on this machine: its CPU is not shown.');
  const input = await inputs();
  console.log(`Write costs on ${url.replace(/\/\/[^@]*@/, '//')}: ${writers} connections, ${seconds} s per variant, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log('| variant | writes/s | client CPU ms/write | server CPU ms/write |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const variant of VARIANTS) console.log(await measure(variant, input));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
