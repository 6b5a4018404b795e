// Test harness of a Helpdesk plugin: loads dist/plugin.wasm the way the Helpdesk host does
// (Extism in a worker thread, a time-out, allowed hosts, configuration) and starts a fake vendor API
// on 127.0.0.1, so the plugin's operations run end to end without the real vendor.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import createPlugin from '@extism/extism';

export async function fakeVendor(routes) {
  const calls = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    calls.push({ method: req.method, url: req.url, headers: req.headers, body });
    const handler = routes[`${req.method} ${req.url.split('?')[0]}`];
    const answer = handler ? await handler({ url: new URL(req.url, 'http://vendor'), headers: req.headers, body }) : { status: 404, json: { error: 'not found' } };
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.json ?? {}));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${server.address().port}`, calls, close: () => new Promise((resolve) => server.close(resolve)) };
}

export async function loadPlugin(config) {
  const wasm = await readFile(new URL('../dist/plugin.wasm', import.meta.url));
  const plugin = await createPlugin({ wasm: [{ data: new Uint8Array(wasm) }] }, {
    useWasi: false, runInWorker: true, timeoutMs: 2000, allowedHosts: ['127.0.0.1'], config, logLevel: 'silent',
  });
  return {
    async call(op, input) {
      const out = await plugin.call(op, JSON.stringify(input));
      const text = out ? new TextDecoder().decode(out.bytes()) : '';
      return text ? JSON.parse(text) : {};
    },
    close: () => plugin.close(),
  };
}

export const TICKET = { ticket_id: '0193a0c0-0000-7000-8000-000000000001', ticket_number: 42, subject: 'Printer on fire', requester_email: 'ana@example.com', requester_name: 'Ana' };
