/**
 * Extension benchmark: the real daemon (app + PostgreSQL) on loopback with plugins built from the
 * templates by the real toolchain, a CRM stand-in on loopback answering at once.
 *
 *   node --import tsx bench/extensions.ts
 *   BENCH_DATABASE_URL=postgres://… BENCH_SECONDS=10 BENCH_CONCURRENCY=16 node --import tsx bench/extensions.ts
 *
 * 1. Context-panel calls per second through GET /tickets/:id/extension-context/:provider (the
 *    context_tool template: one plugin call that makes one HTTP request to the vendor), next to a
 *    plain ticket read through the same pipeline.
 * 2. The latency a plugin call adds: one call of a plugin op that does no I/O (the tasklist
 *    template's create form), timed alone as the routes make it, p50 and p99; and sequential
 *    requests to a panel that answers without calling out, next to the plain ticket read.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { buildApp } from '../daemon/app.js';
import { CLI_ACTOR } from '../src/core/context.js';
import { inTransaction } from '../src/db/transaction.js';
import { buildPlugin, newPlugin } from '../src/extensions/toolchain.js';
import { configureExtension, installExtension } from '../src/extensions/service.js';
import { Extension } from '../src/extensions/models.js';
import { runJson } from '../src/extensions/runtime.js';
import { readFile } from 'node:fs/promises';
import { scratchDatabase } from './shared/scratch.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const samples = Number(process.env.BENCH_SAMPLES ?? 500);

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function main(): Promise<void> {
  const scratch = await scratchDatabase({ env: { HELPDESK_WEBHOOKS_ALLOW_PRIVATE: '1' } });
  const { deps, dataDir, tenant: created } = scratch;
  const crm = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"name":"Ana Corp","plan":"Enterprise","mrr":4200,"url":"https://crm.example/ana"}');
  });
  crm.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => crm.listen(0, '127.0.0.1', resolve));
  try {
    const tenantId = created.tenant.id;
    for (const kind of ['context_tool', 'tasklist']) {
      const project = await newPlugin({ name: `bench-${kind.replace('_', '-')}`, kind, dir: join(dataDir, kind), vendorHost: '127.0.0.1' });
      const built = await buildPlugin(project.dir);
      const manifest = JSON.parse(await readFile(join(project.dir, 'manifest.json'), 'utf8'));
      await inTransaction(deps, { tenantId, actor: CLI_ACTOR, now: new Date() }, async (ctx) => {
        const ext = await installExtension(ctx, { manifest, module: new Uint8Array(await readFile(built.wasm)) });
        await configureExtension(ctx, ext.id, { config: { base_url: `http://127.0.0.1:${(crm.address() as AddressInfo).port}`, api_token: 't' } });
      });
    }
    const app = await buildApp(deps);
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const headers = { authorization: `Bearer ${created.api_key}`, 'content-type': 'application/json' };
    const ticket = await (await fetch(`${address}/api/v1/tickets`, { method: 'POST', headers, body: JSON.stringify({ subject: 'Bench', body: 'Bench', requester: { email: 'ana@example.com' } }) })).json() as { id: string };
    const plain = `/api/v1/tickets/${ticket.id}`;
    const panel = `/api/v1/tickets/${ticket.id}/extension-context/bench-context-tool`;
    const quiet = `/api/v1/tickets/${ticket.id}/extension-context/bench-tasklist`;

    console.log(`Extension benchmark: Node ${process.version}, ${seconds} s per scenario, ${concurrency} connections`);
    for (const [label, path] of [['GET ticket (no plugin)', plain], ['GET context panel (plugin + vendor call)', panel]] as const) {
      const result = await autocannon({ url: address + path, headers, connections: concurrency, duration: seconds });
      const errors = result.non2xx + result.errors;
      console.log(`${label.padEnd(42)} ${result.requests.average.toFixed(0).padStart(6)} req/s   p50 ${String(result.latency.p50).padStart(4)} ms   p99 ${String(result.latency.p99).padStart(4)} ms${errors ? `   (${errors} errors)` : ''}`);
    }

    const time = async (path: string) => {
      const all: number[] = [];
      for (let i = 0; i < samples; i++) {
        const started = performance.now();
        const res = await fetch(address + path, { headers });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
        all.push(performance.now() - started);
      }
      return all.sort((a, b) => a - b);
    };
    await time(quiet); // warm the pool
    const base = await time(plain);
    const withPlugin = await time(quiet);
    // The plugin call alone, as the routes make it (worker round trip, JSON in and out).
    const row = Extension.fromDatabaseJson(await deps.db('extensions').where({ tenant_id: tenantId, name: 'bench-tasklist' }).first());
    const direct: number[] = [];
    for (let i = 0; i < samples; i++) {
      const started = performance.now();
      await runJson(deps, row, 'create_form', {});
      direct.push(performance.now() - started);
    }
    direct.sort((a, b) => a - b);
    const p = (list: number[], q: number) => percentile(list, q).toFixed(2).padStart(6);
    console.log(`sequential, ${samples} requests each:`);
    console.log(`  GET ticket (no plugin)                   p50 ${p(base, 50)} ms   p99 ${p(base, 99)} ms`);
    console.log(`  GET context panel (plugin, no vendor)    p50 ${p(withPlugin, 50)} ms   p99 ${p(withPlugin, 99)} ms`);
    console.log(`  one plugin call (added to a request)     p50 ${p(direct, 50)} ms   p99 ${p(direct, 99)} ms`);
    await app.close();
  } finally {
    crm.closeAllConnections();
    crm.close();
    await scratch.close();
  }
}

await main();
