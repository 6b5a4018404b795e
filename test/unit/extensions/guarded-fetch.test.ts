import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { guardedFetch } from '../../../src/extensions/host.js';

/**
 * The guarded fetch (plugins' HTTP and the knowledge-base crawler) keeps its own ten-second ceiling
 * but honours the caller's signal too: a crawler's shorter page timeout, or a call cancelled.
 */
const stalled: Server = createServer(() => undefined); // accepts, never answers
await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => { stalled.closeAllConnections(); stalled.close(() => resolve()); }));
const url = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}/page`;
const fetcher = guardedFetch(['127.0.0.1'], true);

t.test("the caller's timeout ends a request the server never answers", async (t) => {
  const started = Date.now();
  await t.rejects(fetcher(url, { signal: AbortSignal.timeout(300) }), /failed|abort|timeout/i);
  const took = Date.now() - started;
  t.ok(took < 5_000, `ended after ${took} ms, not at the 10 s ceiling`);
});

t.test("a caller's cancel ends it too", async (t) => {
  const controller = new AbortController();
  const started = Date.now();
  setTimeout(() => controller.abort(), 200);
  await t.rejects(fetcher(url, { signal: controller.signal }), /failed|abort/i);
  t.ok(Date.now() - started < 5_000);
});

t.test('without a signal the guard still refuses hosts outside the list', async (t) => {
  await t.rejects(guardedFetch(['example.com'], true)(url), /not allowed/);
});
