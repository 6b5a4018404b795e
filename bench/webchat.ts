/**
 * Live chat benchmark (docs/chat.md): how many visitor streams one daemon process holds, at what
 * memory, and how fast a message fans out to its visitor's stream.
 *
 *   npx tsc -p tsconfig.json && node --import tsx bench/webchat.ts
 *   BENCH_STREAMS=5000 BENCH_MESSAGES=500 BENCH_DATABASE_URL=postgres://…/postgres node --import tsx bench/webchat.ts
 *
 * It migrates a fresh database, seeds one tenant with a widget and BENCH_STREAMS visitors with a
 * waiting conversation each (rows written directly: the bench measures streams, not sign-ups),
 * starts `helpdesk serve` from dist/ as a child process, opens one visitor stream per visitor
 * (each its own TCP connection, in batches), then reads the daemon's resident memory from /proc.
 * Fan-out: BENCH_MESSAGES visitors (distinct, so the per-visitor rate limit never applies) each
 * POST a message while every stream stays open; latency is from sending the POST to that line
 * arriving on the visitor's stream (API, commit, NOTIFY, the process's visitor hub, the stream).
 */
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/core/config.js';
import { CLI_ACTOR } from '../src/core/context.js';
import { createDeps, closeDeps } from '../src/core/deps.js';
import { createLogger } from '../src/core/logging.js';
import { createDb, withDatabase } from '../src/db/connection.js';
import { migrateLatest } from '../src/db/migrations.js';
import { createTenant } from '../src/tenants/service.js';
import { sha256Hex } from '../src/core/crypto.js';
import { uuidv7 } from '../src/core/ids.js';

const root = new URL('..', import.meta.url).pathname;
const STREAMS = Number(process.env.BENCH_STREAMS ?? 5000);
const MESSAGES = Math.min(Number(process.env.BENCH_MESSAGES ?? 500), STREAMS);
const BATCH = 250;
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const ORIGIN = 'https://bench.example.com';

function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

interface Stream { seen: Map<string, number>; socket: http.ClientRequest; opened: boolean }

function openStream(port: number, token: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const stream: Stream = { seen: new Map(), socket: null as unknown as http.ClientRequest, opened: false };
    const request = http.get({ host: '127.0.0.1', port, path: '/api/v1/webchat/visitor/stream', agent: false,
      headers: { authorization: `Bearer ${token}`, origin: ORIGIN, accept: 'text/event-stream' } }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`stream answered ${response.statusCode}`));
      stream.opened = true;
      response.setEncoding('utf8');
      let buffer = '';
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = block.split('\n').find((l) => l.startsWith('data: '));
          if (data) {
            const text = (JSON.parse(data.slice(6)) as { text?: string }).text;
            if (text) stream.seen.set(text, performance.now());
          }
        }
      });
      resolve(stream);
    });
    request.on('error', reject);
    stream.socket = request;
  });
}

function post(port: number, token: string, message: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ message });
    const request = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/api/v1/webchat/visitor/messages', agent: false,
      headers: { authorization: `Bearer ${token}`, origin: ORIGIN, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    request.end(body);
  });
}

async function main(): Promise<void> {
  const name = `helpdesk_bench_chat_${randomBytes(4).toString('hex')}`;
  const admin = createDb(adminUrl, { max: 1 });
  await admin.raw(`create database ${name}`);
  const databaseUrl = withDatabase(adminUrl, name);
  const dataDir = mkdtempSync(join(tmpdir(), 'helpdesk-bench-chat-'));
  const deps = createDeps(loadConfig({ HELPDESK_DATA_DIR: dataDir }), databaseUrl, { log: createLogger('silent'), poolMax: 4 });
  let child: ReturnType<typeof spawn> | null = null;
  const streams: Stream[] = [];
  try {
    await migrateLatest(deps.db);
    const { tenant } = await createTenant(deps, { slug: 'chat', name: 'Chat', adminEmail: 'admin@chat.example.com', adminPassword: 'benchmark password 123' }, CLI_ACTOR, new Date());
    const now = new Date();
    const widgetId = uuidv7();
    await deps.db('webchat_widgets').insert({ tenant_id: tenant.id, id: widgetId, name: 'Bench', allowed_origins: JSON.stringify([ORIGIN]), created_at: now, updated_at: now });
    const tokens: string[] = [];
    for (let i = 0; i < STREAMS; i += 1000) {
      const visitors = [], conversations = [];
      for (let j = i; j < Math.min(STREAMS, i + 1000); j++) {
        const token = `hdv_${randomBytes(32).toString('base64url')}`;
        tokens.push(token);
        const visitorId = uuidv7();
        visitors.push({ tenant_id: tenant.id, id: visitorId, widget_id: widgetId, name: `Visitor ${j}`, token_hash: sha256Hex(token), last_seen_at: now, created_at: now });
        conversations.push({ tenant_id: tenant.id, id: uuidv7(), widget_id: widgetId, visitor_id: visitorId, status: 'waiting', started_at: now, last_message_at: now });
      }
      await deps.db('webchat_visitors').insert(visitors);
      await deps.db('webchat_conversations').insert(conversations);
    }

    child = spawn(process.execPath, [join(root, 'bin/run.js'), 'serve', '--port', '0', '--no-jobs', '--json'], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: databaseUrl, HELPDESK_DATA_DIR: dataDir, HELPDESK_SECRET_KEY: 'c'.repeat(64),
        HELPDESK_RATE_LIMIT_PER_MIN: '1000000000', HELPDESK_STREAM_MAX_SECONDS: '3600', LOG_LEVEL: 'warn', NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child!.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        try { resolve((JSON.parse(out) as { url: string }).url); } catch { /* not yet */ }
      });
      child!.once('exit', (code) => reject(new Error(`the daemon exited (${code})`)));
    });
    const port = Number(new URL(url).port);
    const idle = memory(child.pid!);

    const openStarted = performance.now();
    for (let i = 0; i < STREAMS; i += BATCH) {
      streams.push(...await Promise.all(tokens.slice(i, i + BATCH).map((token) => openStream(port, token))));
    }
    const openSeconds = (performance.now() - openStarted) / 1000;
    await new Promise((r) => setTimeout(r, 2000));
    const held = memory(child.pid!);

    // Fan-out: MESSAGES visitors write, 20 at a time, while all streams stay open.
    const latencies: number[] = [];
    let failed = 0;
    const order = Array.from({ length: MESSAGES }, (_, i) => Math.floor((i * STREAMS) / MESSAGES));
    for (let i = 0; i < order.length; i += 20) {
      await Promise.all(order.slice(i, i + 20).map(async (index) => {
        const text = `bench line ${index}`;
        const sent = performance.now();
        const status = await post(port, tokens[index]!, text);
        if (status !== 201) return void (failed += 1);
        const stream = streams[index]!;
        const deadline = performance.now() + 10_000;
        while (!stream.seen.has(text) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 2));
        const at = stream.seen.get(text);
        if (at === undefined) failed += 1;
        else latencies.push(at - sent);
      }));
    }
    latencies.sort((a, b) => a - b);
    const after = memory(child.pid!);
    const lost = streams.filter((s) => s.socket.destroyed).length;

    console.log(`Live chat benchmark, Node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log(`streams held by one daemon: ${streams.length} (opened in ${openSeconds.toFixed(1)} s; ${lost} dropped)`);
    console.log(`daemon RSS: idle ${idle.rss.toFixed(0)} MB, holding the streams ${held.rss.toFixed(0)} MB, after fan-out ${after.rss.toFixed(0)} MB (peak ${after.peak.toFixed(0)} MB)`);
    console.log(`fan-out (POST → line on the visitor's stream), ${latencies.length} messages, ${failed} failed: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${(latencies.at(-1) ?? 0).toFixed(1)} ms`);
  } finally {
    for (const stream of streams) stream.socket.destroy();
    if (child) {
      child.kill('SIGTERM');
      await new Promise((r) => child!.once('exit', r));
    }
    await closeDeps(deps);
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
