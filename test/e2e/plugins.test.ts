import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createTestDatabase } from '../helpers/db.js';
import { cliEnv, runCli, startServe, tempDataDir } from '../helpers/cli.js';

/**
 * From `helpdesk plugin new` to a plugin answering, for every template kind, with the real
 * executable: generate, build, install (locally and through the API), then call the plugin through
 * the running daemon's routes, with a local HTTP server standing in for each vendor.
 */

type Route = (input: { url: URL; headers: Record<string, unknown>; body: string }) => { status?: number; json?: unknown };

async function vendor(t: { teardown(fn: () => unknown): void }, routes: Record<string, Route>) {
  const calls: Array<{ method: string; url: string; body: string }> = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    calls.push({ method: req.method!, url: req.url!, body });
    const handler = routes[`${req.method} ${req.url!.split('?')[0]}`];
    const answer = handler ? handler({ url: new URL(req.url!, 'http://vendor'), headers: req.headers, body }) : { status: 404, json: {} };
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.json ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

t.test('every template: new, build, install, answer', async (t) => {
  const dataDir = tempDataDir(t);
  const work = tempDataDir(t);
  // The vendors stand on loopback: the outbound-target guard lets plugins reach them only with this allowance.
  const env = cliEnv({ DATABASE_URL: await createTestDatabase(t), HELPDESK_DATA_DIR: dataDir, HELPDESK_WEBHOOKS_ALLOW_PRIVATE: '1' });
  const created = await runCli(['tenant', 'create', '--slug', 'acme', '--name', 'Acme', '--admin-email', 'it@acme.test', '--admin-password', 'a very long password', '--json'], env, 60_000);
  t.equal(created.code, 0, created.stderr);
  const apiKey = created.json().api_key as string;
  const served = await startServe(t, ['--port', '0', '--no-jobs'], env);
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${served.url}/api/v1${path}`, {
      method, headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text, json: () => JSON.parse(text) };
  };
  const ticket = (await api('POST', '/tickets', { subject: 'Printer on fire', body: 'Help', requester: { email: 'ana@example.com', name: 'Ana' } })).json();

  const task = { key: 'TSK-1', title: 'Printer on fire', status: 'open', assignee: 'Bo', priority: 'high', url: 'https://tracker.example/TSK-1', items: [{ id: 'i1', name: 'Call vendor', completed: false }] };
  const crm = await vendor(t, { 'GET /accounts': ({ url }) => (url.searchParams.get('email') === 'ana@example.com' ? { json: { name: 'Ana Corp', plan: 'Enterprise', mrr: 4200, url: 'https://crm.example/ana' } } : { status: 404 }) });
  const tracker = await vendor(t, {
    'GET /projects': () => ({ json: [{ id: 'ops', name: 'Operations' }] }),
    'POST /tasks': ({ body }) => ({ status: 201, json: { ...task, key: 'TSK-2', title: JSON.parse(body).title } }),
    'GET /tasks/TSK-2': () => ({ json: { ...task, key: 'TSK-2' } }),
    'PUT /tasks/TSK-2/items/i1': () => ({ json: { id: 'i1', completed: true } }),
  });
  const chat = await vendor(t, {
    'GET /channels/c-ops/messages': () => ({ json: [{ author: 'bo', text: 'on it' }] }),
    'POST /channels/c-ops/messages': () => ({ status: 201, json: { id: 'm1' } }),
    'POST /channels/c-ops/threads': ({ body }) => ({ status: 201, json: { id: 't-9', url: 'https://chat.example/t-9', title: JSON.parse(body).title } }),
    'POST /channels/c-ops/threads/t-9/messages': () => ({ status: 201, json: { id: 'm2' } }),
  });
  const relayTarget = await vendor(t, { 'POST /events': () => ({ json: { ok: true } }) });

  const configs: Record<string, string[]> = {
    context_tool: [`base_url=${crm.base}`, 'api_token=crm-token'],
    tasklist: [`base_url=${tracker.base}`, 'api_token=tracker-token'],
    chatops: [`base_url=${chat.base}`, 'bot_token=b', 'default_channel=c-ops'],
    webhook_relay: ['webhook_secret=whs', `relay_url=${relayTarget.base}/events`],
  };
  const installed: Record<string, { id: string; hook_url: string | null }> = {};
  for (const kind of Object.keys(configs)) {
    const dir = join(work, kind);
    const made = await runCli(['plugin', 'new', `acme-${kind.replace('_', '-')}`, '--kind', kind, '--dir', dir, '--vendor-host', '127.0.0.1', '--json'], env);
    t.equal(made.code, 0, made.stderr);
    t.ok(made.json().files.includes('README.md') && made.json().files.includes('test/plugin.test.mjs'), `${kind}: README and tests`);
    const built = await runCli(['plugin', 'build', dir, '--json'], env, 120_000);
    t.equal(built.code, 0, built.stdout + built.stderr);
    // Two kinds install locally, two through the API.
    const where = kind === 'tasklist' || kind === 'context_tool' ? ['--tenant', 'acme'] : ['--api-url', served.url, '--token', apiKey];
    const install = await runCli(['plugin', 'install', built.json().wasm, '--manifest', join(dir, 'manifest.json'), ...where, ...configs[kind]!.flatMap((c) => ['--config', c]), '--json'], env, 60_000);
    t.equal(install.code, 0, install.stdout + install.stderr);
    installed[kind] = install.json();
  }

  const panel = await api('GET', `/tickets/${ticket.id}/extension-context/acme-context-tool`);
  t.equal(panel.status, 200, panel.body);
  t.same(panel.json().fields.map((f: { label: string; value: string }) => [f.label, f.value]), [['Account', 'Ana Corp'], ['Plan', 'Enterprise'], ['MRR', '4200']]);

  t.same((await api('GET', '/extension-ops/acme-tasklist/list_projects')).json(), { options: [{ value: 'ops', label: 'Operations' }] });
  t.equal((await api('GET', '/extension-ops/acme-tasklist/create_form')).json().fields[0].key, 'project');
  const createdTask = await api('POST', `/tickets/${ticket.id}/extension-create/acme-tasklist`, { values: { project: 'ops', title: 'Replace printer' } });
  t.equal(createdTask.status, 200, createdTask.body);
  t.match(createdTask.json(), { key: 'TSK-2', title: 'Replace printer' });
  const taskPanel = (await api('GET', `/tickets/${ticket.id}/extension-context/acme-tasklist`)).json();
  t.match(taskPanel, { external_id: 'TSK-2', checklist: [{ id: 'i1', name: 'Call vendor', completed: false }] });
  const toggled = await api('POST', `/tickets/${ticket.id}/extension-actions/acme-tasklist`, { op: 'toggle_item', params: { item_id: 'i1', completed: 'true' } });
  t.equal(toggled.status, 200, toggled.body);
  t.equal(toggled.json().result.summary, 'item i1 done');

  t.match((await api('GET', `/tickets/${ticket.id}/extension-context/acme-chatops`)).json().fields, [{ label: 'Channel', value: 'c-ops' }, { label: 'bo', value: 'on it' }]);
  const posted = await api('POST', `/tickets/${ticket.id}/extension-actions/acme-chatops`, { op: 'post_update', params: { text: 'Printer replaced' } });
  t.equal(posted.status, 200, posted.body);
  t.equal(JSON.parse(chat.calls.at(-1)!.body).text, 'Printer replaced');
  // Chat-ops: bind a team to a channel, open the ticket's thread there, write a note into it.
  const team = (await api('POST', '/teams', { name: 'Ops' })).json();
  const bound = await api('PUT', '/integrations/chat/acme-chatops/routes', { team_id: team.id, channel_id: 'c-ops', channel_name: '#ops' });
  t.equal(bound.status, 200, bound.body);
  const teamTicket = (await api('POST', '/tickets', { subject: 'Outage', body: 'Down', team_id: team.id, requester: { email: 'ana@example.com' } })).json();
  const thread = await api('POST', `/tickets/${teamTicket.id}/chat-thread`, {});
  t.equal(thread.status, 201, thread.body);
  t.match(thread.json(), { provider: 'acme-chatops', channel_id: 'c-ops', thread_id: 't-9', url: 'https://chat.example/t-9' });
  t.match(JSON.parse(chat.calls.at(-1)!.body).title, /Outage$/);
  const note = await api('POST', `/tickets/${teamTicket.id}/thread-notes`, { body: 'On site now' });
  t.equal(note.status, 201, note.body);
  t.match(JSON.parse(chat.calls.at(-1)!.body).text, /On site now$/);
  t.same((await api('GET', `/tickets/${teamTicket.id}/thread-notes`)).json().data.map((n: { body: string; external_id: string }) => [n.body, n.external_id]), [['On site now', 'm2']]);

  const hook = installed.webhook_relay!.hook_url!;
  t.match(hook, /\/integrations\/extensions\/hook\//);
  const hookUrl = new URL(new URL(hook).pathname, served.url).href;
  t.equal(await (await fetch(`${hookUrl}?challenge=c-9`)).text(), 'c-9');
  t.equal((await fetch(hookUrl, { method: 'POST', headers: { 'x-webhook-secret': 'nope' }, body: '{}' })).status, 401);
  const relayed = await fetch(hookUrl, { method: 'POST', headers: { 'x-webhook-secret': 'whs', 'x-event-id': 'e1', 'content-type': 'application/json' }, body: '{"event":"issue.updated"}' });
  t.equal(relayed.status, 200);
  t.equal(Buffer.from(JSON.parse(relayTarget.calls[0]!.body).body_base64, 'base64').toString(), '{"event":"issue.updated"}');

  const timeline = (await api('GET', `/tickets/${ticket.id}/events`)).json().data.map((e: { type: string }) => e.type);
  t.ok(timeline.includes('extension_action'), 'the actions are on the ticket timeline');
  served.child.kill('SIGTERM');
  t.equal(await served.exited, 0);
});
