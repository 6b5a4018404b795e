import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

/**
 * A real HTTP receiver on loopback for webhook tests: it keeps every request's raw body and
 * headers, and answers as told (a status, a delay, or a hang that outlasts the sender's time-out).
 */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  json: { id: string; event: string; created_at: string; tenant_id: string; data: Record<string, unknown> };
  at: number;
}

export type Answer = { status: number; delayMs?: number; headers?: Record<string, string> } | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  /** How to answer the next requests: a fixed answer, or a function of the request. */
  answer: (request: Received) => Answer;
  /** Resolves once `count` requests have arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(t: Test, path = '/hook'): Promise<Receiver> {
  const hanging = new Set<() => void>();
  const receiver: Receiver = {
    url: '',
    received: [],
    answer: () => ({ status: 200 }),
    waitFor: async (count, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      while (receiver.received.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver got ${receiver.received.length} of ${count} requests`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let json: Received['json'];
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        json = {} as Received['json'];
      }
      const entry: Received = { path: req.url ?? '', headers: req.headers, raw, json, at: Date.now() };
      receiver.received.push(entry);
      const answer = receiver.answer(entry);
      if (answer === 'hang') {
        const end = () => res.destroy();
        hanging.add(end);
        return;
      }
      const send = () => {
        res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
        res.end('ok');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  receiver.close = async () => {
    for (const end of hanging) end();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  t.teardown(() => receiver.close());
  return receiver;
}
