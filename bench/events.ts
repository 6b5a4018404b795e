/**
 * Event commit benchmark (docs/performance.md, "The batched event publisher"): how many
 * event-writing transactions one tenant commits per second, in-process, with W concurrent writers.
 * Each transaction records one event the way every ticket change does (`recordEvent` in
 * `inTransaction`) and returns once the event is published; nothing else, so the figures isolate
 * the cost of numbering and announcing events.
 *
 *   node --import tsx bench/events.ts
 *   BENCH_SECONDS=10 BENCH_WRITERS=1,8,32 node --import tsx bench/events.ts
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { SYSTEM_ACTOR } from '../src/core/context.js';
import { inTransaction } from '../src/db/transaction.js';
import { recordEvent } from '../src/events/record.js';
import { scratchDatabase } from './shared/scratch.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const writerCounts = (process.env.BENCH_WRITERS ?? '1,8,32').split(',').map(Number);

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function main(): Promise<void> {
  const scratch = await scratchDatabase({ poolMax: Math.max(...writerCounts) + 2 });
  const { deps } = scratch;
  const tenantId = scratch.tenant.tenant.id;
  try {
    let publisherRuns = 0;
    deps.db.on('query', (q: { sql: string }) => { if (q.sql.includes('events_publish_pending')) publisherRuns += 1; });
    console.log(`Event commit benchmark: ${seconds} s per writer count, Node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    for (const writers of writerCounts) {
      const latencies: number[] = [];
      const runsBefore = publisherRuns;
      const deadline = Date.now() + seconds * 1000;
      const writer = async () => {
        while (Date.now() < deadline) {
          const ticketId = randomUUID();
          const started = process.hrtime.bigint();
          await inTransaction(deps, { tenantId, actor: SYSTEM_ACTOR, now: new Date() }, (ctx) =>
            recordEvent(ctx, { type: 'ticket.status_changed', subjectType: 'ticket', ticketId, from: 'Open', to: 'Pending', data: { ticket_id: ticketId } }));
          latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
        }
      };
      await Promise.all(Array.from({ length: writers }, writer));
      latencies.sort((a, b) => a - b);
      const runs = publisherRuns - runsBefore;
      console.log(
        `${String(writers).padStart(3)} writers ${(latencies.length / seconds).toFixed(0).padStart(6)} commits/s   ` +
          `p50 ${percentile(latencies, 50).toFixed(1).padStart(6)} ms   p99 ${percentile(latencies, 99).toFixed(1).padStart(6)} ms   ` +
          `publisher runs ${runs} (${runs ? (latencies.length / runs).toFixed(1) : '-'} commits each)`,
      );
    }
    const left = await deps.db('events').where({ tenant_id: tenantId }).whereNull('seq').count({ n: '*' }).first();
    console.log(`unnumbered events left: ${left?.n ?? 0}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    await scratch.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
