import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * A small server-sent-events client over a real socket, for tests of live streams: it parses
 * events (`id`, `event`, `data` as JSON) and comment lines as they arrive and can wait for them.
 */
export interface SseEvent {
  id: string | null;
  event: string | null;
  data: any;
}

export interface SseClient {
  status: number;
  headers: http.IncomingHttpHeaders;
  events: SseEvent[];
  comments: string[];
  /** The raw text received so far. */
  text: string;
  /** Resolves when the server ends the response (or the connection is cut). */
  ended: Promise<void>;
  isEnded(): boolean;
  /** Waits until `predicate` holds, failing after `timeoutMs`. */
  until(predicate: () => boolean, timeoutMs?: number, what?: string): Promise<void>;
  /** Stops reading from the socket (the client stalls) and starts again. */
  pause(): void;
  resume(): void;
  close(): void;
}

/** Listens on an ephemeral loopback port (once) and returns the base URL. */
export async function baseUrlOf(app: FastifyInstance): Promise<string> {
  if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

export function openSse(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${baseUrl}/api/v1${path}`, { headers: { accept: 'text/event-stream', ...headers } }, (response) => {
      response.setEncoding('utf8');
      let buffer = '';
      let ended = false;
      let endedResolve!: () => void;
      const endedPromise = new Promise<void>((r) => (endedResolve = r));
      const client: SseClient = {
        status: response.statusCode ?? 0,
        headers: response.headers,
        events: [],
        comments: [],
        text: '',
        ended: endedPromise,
        isEnded: () => ended,
        async until(predicate, timeoutMs = 5000, what = 'condition') {
          const deadline = Date.now() + timeoutMs;
          while (!predicate()) {
            if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; received:\n${client.text.slice(-2000)}`);
            await new Promise((r) => setTimeout(r, 10));
          }
        },
        pause: () => response.pause(),
        resume: () => response.resume(),
        close: () => request.destroy(),
      };
      const finish = () => {
        if (ended) return;
        ended = true;
        endedResolve();
      };
      response.on('data', (chunk: string) => {
        client.text += chunk;
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event: SseEvent = { id: null, event: null, data: undefined };
          let isEvent = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) client.comments.push(line.slice(1).trim());
            else if (line.startsWith('id: ')) event.id = line.slice(4);
            else if (line.startsWith('event: ')) event.event = line.slice(7);
            else if (line.startsWith('data: ')) {
              event.data = JSON.parse(line.slice(6));
              isEvent = true;
            }
          }
          if (isEvent) client.events.push(event);
        }
      });
      response.on('end', finish);
      response.on('close', finish);
      response.on('error', finish);
      resolve(client);
    });
    request.on('error', reject);
  });
}
