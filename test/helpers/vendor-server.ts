import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

/**
 * A local stand-in for the video and calendar vendors: an OAuth 2.0 token endpoint (authorization
 * code and refresh token grants), rooms, calendar events, change subscriptions and free/busy, in the
 * shapes src/meetings/vendor.ts speaks. It records every request and keeps its state in memory.
 */
export interface VendorRequest { method: string; path: string; auth: string | undefined; body: Record<string, unknown>; form: Record<string, string> }

export interface VendorServer {
  url: string;
  requests: VendorRequest[];
  events: Map<string, Record<string, unknown>>;
  rooms: Map<string, Record<string, unknown>>;
  busy: Array<{ start: string; end: string }>;
  /** Seconds the next issued access token lives (a short one forces a refresh). */
  expiresIn: number;
  tokensIssued: number;
}

export async function vendorServer(t: Test): Promise<VendorServer> {
  let counter = 0;
  const state: VendorServer = { url: '', requests: [], events: new Map(), rooms: new Map(), busy: [], expiresIn: 3600, tokensIssued: 0 };
  const valid = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://vendor');
      const form = /urlencoded/.test(String(req.headers['content-type'])) ? Object.fromEntries(new URLSearchParams(raw)) : {};
      const body = /json/.test(String(req.headers['content-type'])) && raw ? JSON.parse(raw) : {};
      const request = { method: req.method!, path: url.pathname, auth: req.headers.authorization, body, form };
      state.requests.push(request);
      const send = (status: number, json?: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(json === undefined ? '' : JSON.stringify(json));
      };
      const issue = () => {
        state.tokensIssued += 1;
        const access = `at-${state.tokensIssued}`;
        valid.add(access);
        send(200, { access_token: access, refresh_token: `rt-${state.tokensIssued}`, expires_in: state.expiresIn, token_type: 'Bearer' });
      };
      if (req.method === 'POST' && url.pathname === '/oauth/token') {
        if (form.client_id !== 'client-id' || form.client_secret !== 'client-secret') return send(401, { error: 'invalid_client' });
        if (form.grant_type === 'authorization_code' && form.code === 'good-code') return issue();
        if (form.grant_type === 'refresh_token' && /^rt-\d+$/.test(form.refresh_token ?? '')) return issue();
        return send(400, { error: 'invalid_grant' });
      }
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (!valid.has(token)) return send(401, { error: 'invalid_token' });
      const id = () => `id-${++counter}`;
      if (req.method === 'POST' && url.pathname === '/rooms') {
        const room = { id: id(), ...body };
        state.rooms.set(room.id, room);
        return send(201, { id: room.id, join_url: `https://video.vendor.example/j/${room.id}` });
      }
      const roomMatch = /^\/rooms\/(.+)$/.exec(url.pathname);
      if (req.method === 'DELETE' && roomMatch) { state.rooms.delete(decodeURIComponent(roomMatch[1]!)); return send(204); }
      if (req.method === 'POST' && ['/me/events', '/calendars/primary/events'].includes(url.pathname)) {
        const event = { id: id(), ...body };
        state.events.set(event.id, event);
        return send(201, { id: event.id });
      }
      const eventMatch = /^\/(?:me\/events|calendars\/primary\/events)\/(.+)$/.exec(url.pathname);
      if (eventMatch && url.pathname.endsWith('/watch') === false) {
        const key = decodeURIComponent(eventMatch[1]!);
        if (!state.events.has(key)) return send(404, { error: 'not_found' });
        if (req.method === 'DELETE') { state.events.delete(key); return send(204); }
        state.events.set(key, { id: key, ...body });
        return send(200, { id: key });
      }
      if (req.method === 'POST' && url.pathname === '/subscriptions') return send(201, { id: id(), expirationDateTime: body.expirationDateTime });
      if (req.method === 'PATCH' && url.pathname.startsWith('/subscriptions/')) return send(200, { id: url.pathname.split('/').pop(), expirationDateTime: body.expirationDateTime });
      if (req.method === 'POST' && url.pathname === '/calendars/primary/events/watch') return send(200, { id: body.id, resourceId: id(), expiration: body.expiration });
      if (req.method === 'POST' && ['/me/getSchedule', '/freeBusy'].includes(url.pathname)) return send(200, { busy: state.busy });
      send(404, { error: 'no_route' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
