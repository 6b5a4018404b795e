/**
 * Knowledge base benchmark: the real retrieval index on a real PostgreSQL database.
 *
 *   node --import tsx bench/kb.ts
 *   BENCH_DATABASE_URL=postgres://… BENCH_PASSAGES=100000 BENCH_QUERIES=300 node --import tsx bench/kb.ts
 *
 * 1. Indexing: BENCH_PASSAGES synthetic passages (documents of 100 passages, ~70 words each from a
 *    Zipf-distributed vocabulary of 30,000 made-up words plus common English) go through
 *    `indexPassages`, the function the ingestion job and the crawler use (tsvector, term
 *    statistics): passages indexed per second.
 * 2. Ask: BENCH_QUERIES questions of 3–8 words (half drawn from a stored passage, half at random)
 *    through `ask`, the service behind POST /kb-documents/ask: latency p50/p99 (target p99 ≤ 150 ms).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/core/config.js';
import { CLI_ACTOR } from '../src/core/context.js';
import { createDeps, closeDeps } from '../src/core/deps.js';
import { createLogger } from '../src/core/logging.js';
import { uuidv7 } from '../src/core/ids.js';
import { createDb, withDatabase } from '../src/db/connection.js';
import { migrateLatest } from '../src/db/migrations.js';
import { inTransaction, readContext } from '../src/db/transaction.js';
import { insertScoped } from '../src/db/tenant-scope.js';
import { createTenant } from '../src/tenants/service.js';
import { indexPassages } from '../src/kb/retrieval.js';
import { ask } from '../src/kb/ask.js';

const totalPassages = Number(process.env.BENCH_PASSAGES ?? 100_000);
const queries = Number(process.env.BENCH_QUERIES ?? 300);
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const PER_DOCUMENT = 100;

/** A deterministic generator, so two runs index the same text. */
let seed = 20261128;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'za', 'pe', 'dor', 'len', 'mar', 'tis', 'qua', 'bel', 'fin', 'gor', 'hul', 'jen'];
const COMMON = 'the a to of and in is for on with you your can this that be it by from or as at are not an will when if'.split(' ');
const vocabulary: string[] = [];
for (let i = 0; vocabulary.length < 30_000; i += 1) {
  const length = 2 + (i % 3);
  let word = '';
  for (let j = 0; j < length; j += 1) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
  vocabulary.push(word);
}
/** Zipf-like: word rank r drawn with probability ∝ 1/r. */
const zipf = () => vocabulary[Math.min(vocabulary.length - 1, Math.floor(Math.exp(random() * Math.log(vocabulary.length))) - 1)]!;
const sentence = (words: number) => Array.from({ length: words }, () => (random() < 0.3 ? COMMON[Math.floor(random() * COMMON.length)] : zipf())).join(' ');
const passageText = () => Array.from({ length: 5 }, () => `${sentence(14)}.`).join(' ');

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function main(): Promise<void> {
  const name = `helpdesk_bench_${randomBytes(4).toString('hex')}`;
  const admin = createDb(adminUrl, { max: 1 });
  await admin.raw(`create database ${name}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'helpdesk-bench-'));
  const config = { ...loadConfig({ HELPDESK_DATA_DIR: dataDir }), logLevel: 'silent' };
  const deps = createDeps(config, withDatabase(adminUrl, name), { log: createLogger('silent'), poolMax: 5 });
  try {
    await migrateLatest(deps.db);
    const { tenant } = await createTenant(deps, { slug: 'bench', name: 'Bench', adminEmail: 'admin@bench.example.com', adminPassword: 'correct horse battery staple' }, CLI_ACTOR, new Date());
    const samples: string[] = [];
    const started = performance.now();
    let indexed = 0;
    for (let d = 0; indexed < totalPassages; d += 1) {
      const count = Math.min(PER_DOCUMENT, totalPassages - indexed);
      const drafts = Array.from({ length: count }, (_, i) => ({ heading: `${sentence(3)} > ${sentence(2)}`, text: passageText(), i }));
      if (d % 10 === 0) samples.push(drafts[0]!.text);
      await inTransaction(deps, { tenantId: tenant.id, actor: CLI_ACTOR, now: new Date() }, async (ctx) => {
        const id = uuidv7(ctx.now.getTime());
        await insertScoped(ctx, 'kb_documents', {
          id, filename: `doc-${d}.txt`, content_type: 'text/plain', size: 0, status: 'indexed', created_at: ctx.now, updated_at: ctx.now,
        });
        await indexPassages(ctx, { document_id: id, title: sentence(4), locale: 'en', visibility: 'public' }, drafts);
      });
      indexed += count;
      if (d % 100 === 99) process.stdout.write(`  ${indexed} passages indexed\n`);
    }
    const indexSeconds = (performance.now() - started) / 1000;
    await deps.db.raw('ANALYZE kb_passages; ANALYZE kb_terms');

    const ctx = readContext(deps, { tenantId: tenant.id, actor: CLI_ACTOR, now: new Date(), requestId: null, ip: null });
    const questions = Array.from({ length: queries }, (_, i) => {
      if (i % 2 === 0) {
        const words = samples[Math.floor(random() * samples.length)]!.replace(/\./g, '').split(' ');
        const start = Math.floor(random() * (words.length - 8));
        return words.slice(start, start + 3 + Math.floor(random() * 6)).join(' ');
      }
      return `how do I ${sentence(2 + Math.floor(random() * 5))}`;
    });
    for (const q of questions.slice(0, 20)) await ask(ctx, { query: q }); // warm-up
    const latencies: number[] = [];
    let answered = 0;
    for (const q of questions) {
      const t0 = performance.now();
      const result = await ask(ctx, { query: q, top_k: 5 });
      latencies.push(performance.now() - t0);
      if (result.answer) answered += 1;
    }
    latencies.sort((a, b) => a - b);
    const cpus = (await import('node:os')).cpus().length;
    const load = (await import('node:os')).loadavg().map((l) => l.toFixed(2)).join(' ');
    console.log(`Knowledge base benchmark: Node ${process.version}, ${cpus} cores, load average ${load}`);
    console.log(`indexing   ${totalPassages} passages in ${indexSeconds.toFixed(1)} s: ${Math.round(totalPassages / indexSeconds)} passages/s`);
    console.log(`ask        ${queries} questions over ${totalPassages} passages: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${latencies[latencies.length - 1]!.toFixed(1)} ms (${answered} answered)`);
  } finally {
    await closeDeps(deps);
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
