import t from 'tap';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { buildPlugin, manifestFor } from '../../helpers/plugins.js';
import { SERVICE_ENTRYPOINTS, SERVICE_PLUGIN } from '../../helpers/plugin-sources.js';
import { openTicket } from '../../helpers/tickets.js';

/** Storage file requests and chat-ops (SPEC "Extensions") through a real plugin. */

const plugin = buildPlugin(SERVICE_PLUGIN);

async function install(env: TestEnv, token: string, name: string, kind: string) {
  const res = await call(env, 'POST', '/extensions', {
    token, body: { manifest: manifestFor({ name, kind, entrypoints: SERVICE_ENTRYPOINTS }), module_base64: Buffer.from(await plugin).toString('base64') },
  });
  if (res.statusCode !== 201) throw new Error(res.body);
  return res.json();
}

const rows = (env: TestEnv, table: string, tenantId: string, where: Record<string, unknown> = {}) => env.deps.db(table).where({ tenant_id: tenantId, ...where });

t.test('storage file request: plugin call with the request and the ticket, event and audit; bad input, other tenant, failure', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const token = tenant.admin.token;
  await install(env, token, 'box', 'context_tool');
  const agent = await userFixture(env, tenant.id, 'agent');
  const ticket = await openTicket(env, token, { subject: 'Need logs', requester: { email: 'c@example.com' } });
  const url = `/tickets/${ticket.id}/storage-file-requests/box`;

  const res = await call(env, 'POST', url, { token: agent.token, body: { title: 'Logs please', description: 'The server logs', max_file_size_bytes: 1048576, allowed_extensions: ['.LOG', 'txt', 'log'] } });
  t.equal(res.statusCode, 201, res.body);
  t.match(res.json(), {
    provider: 'box', ticket_id: ticket.id, title: 'Logs please', max_file_size_bytes: 1048576, allowed_extensions: ['log', 'txt'],
    url: 'https://files.example/r/tok-123', token: 'tok-123', expires_at: '2026-12-01T00:00:00Z',
  });
  const events = await rows(env, 'events', tenant.id, { type: 'ticket.extension_action' });
  t.same(events.map((e: any) => [e.data.from, e.data.to, e.data.actor_id]), [['box: create_file_request', 'file request "Logs please"', agent.id]]);
  const audit = await rows(env, 'audit_log', tenant.id, { action: 'extension.file_request' });
  t.equal(audit.length, 1);
  t.notOk(JSON.stringify(audit).includes('tok-123'), 'the token is not in the audit log');

  const bad = await call(env, 'POST', url, { token, body: { title: '', max_file_size_bytes: 1.5, allowed_extensions: ['../x'] } });
  t.equal(bad.statusCode, 422, bad.body);
  const fields = bad.json().details.map((d: { field: string }) => d.field).join(' ');
  for (const f of ['title', 'max_file_size_bytes', 'allowed_extensions']) t.match(fields, f, `names ${f}`);
  t.equal((await call(env, 'POST', url, { token: other.admin.token, body: { title: 'x' } })).statusCode, 404, 'another tenant: 404');
  t.equal((await call(env, 'POST', `/tickets/${ticket.id}/storage-file-requests/none`, { token, body: { title: 'x' } })).statusCode, 404);
  const failed = await call(env, 'POST', url, { token, body: { title: 'fail now' } });
  t.equal(failed.statusCode, 502, failed.body);
  t.equal(failed.json().code, 'extension_failed');
  t.equal((await rows(env, 'events', tenant.id, { type: 'ticket.extension_action' })).length, 1, 'nothing recorded for the failure');
  const customer = await userFixture(env, tenant.id, 'customer');
  t.equal((await call(env, 'POST', url, { token: customer.token, body: { title: 'x' } })).statusCode, 403);
  t.equal((await call(env, 'POST', `/tickets/${ticket.id}/extension-actions/box`, { token, body: { op: 'create_file_request' } })).statusCode, 422, 'not a panel action');
  t.same(env.guard.violations, []);
});

t.test('chat-ops: bind a team to a channel, open the ticket thread there, thread notes posted through the plugin', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const token = tenant.admin.token;
  const chat = await install(env, token, 'chat', 'chatops');
  await install(env, token, 'box', 'context_tool');
  const agent = await userFixture(env, tenant.id, 'agent');
  const team = (await call(env, 'POST', '/teams', { token, body: { name: 'Ops' } })).json();
  const otherTeam = (await call(env, 'POST', '/teams', { token: other.admin.token, body: { name: 'Theirs' } })).json();
  const routes = '/integrations/chat/chat/routes';

  t.same((await call(env, 'GET', routes, { token })).json(), { data: [] });
  const badRoute = await call(env, 'PUT', routes, { token, body: { team_id: 'nope', channel_id: '' } });
  t.equal(badRoute.statusCode, 422);
  const foreign = await call(env, 'PUT', routes, { token, body: { team_id: otherTeam.id, channel_id: 'c-1' } });
  t.equal(foreign.statusCode, 422, "another tenant's team is not a team here");
  t.equal((await call(env, 'PUT', '/integrations/chat/box/routes', { token, body: { team_id: team.id, channel_id: 'c-1' } })).statusCode, 404, 'not a chat extension');
  const bound = await call(env, 'PUT', routes, { token, body: { team_id: team.id, channel_id: 'c-old', channel_name: '#old' } });
  t.equal(bound.statusCode, 200, bound.body);
  const rebound = await call(env, 'PUT', routes, { token, body: { team_id: team.id, channel_id: 'c-ops', channel_name: '#ops' } });
  t.match(rebound.json(), { provider: 'chat', team_id: team.id, channel_id: 'c-ops', channel_name: '#ops' });
  t.equal((await call(env, 'GET', routes, { token })).json().data.length, 1, 'rebinding replaces');
  t.equal((await call(env, 'GET', routes, { token: other.admin.token })).statusCode, 404, 'another tenant: 404');

  const ticket = await openTicket(env, token, { subject: 'Outage', team_id: team.id, requester: { email: 'c@example.com' } });
  const loose = await openTicket(env, token, { subject: 'No team', requester: { email: 'c@example.com' } });
  t.equal((await call(env, 'POST', `/tickets/${ticket.id}/thread-notes`, { token, body: { body: 'early' } })).statusCode, 409, 'no thread yet');
  t.equal((await call(env, 'POST', `/tickets/${loose.id}/chat-thread`, { token, body: {} })).statusCode, 409, 'no team, no channel');
  t.equal((await call(env, 'POST', `/tickets/${ticket.id}/chat-thread`, { token: other.admin.token, body: {} })).statusCode, 404, 'another tenant: 404');
  const opened = await call(env, 'POST', `/tickets/${ticket.id}/chat-thread`, { token: agent.token, body: {} });
  t.equal(opened.statusCode, 201, opened.body);
  t.match(opened.json(), { provider: 'chat', ticket_id: ticket.id, channel_id: 'c-ops', thread_id: 'th-1', url: 'https://chat.example/th-1' });
  t.equal((await call(env, 'POST', `/tickets/${ticket.id}/chat-thread`, { token, body: { provider: 'chat' } })).statusCode, 409, 'one thread per ticket');

  const note = await call(env, 'POST', `/tickets/${ticket.id}/thread-notes`, { token: agent.token, body: { body: 'Rolling back now' } });
  t.equal(note.statusCode, 201, note.body);
  t.match(note.json(), { ticket_id: ticket.id, body: 'Rolling back now', author_id: agent.id, external_id: 'msg-1' });
  t.equal((await call(env, 'POST', `/tickets/${ticket.id}/thread-notes`, { token, body: { body: '' } })).statusCode, 422);
  const failed = await call(env, 'POST', `/tickets/${ticket.id}/thread-notes`, { token, body: { body: 'fail please' } });
  t.equal(failed.statusCode, 502, 'the plugin failed');
  const list = await call(env, 'GET', `/tickets/${ticket.id}/thread-notes`, { token: agent.token });
  t.equal(list.statusCode, 200);
  t.same(list.json().data.map((n: { body: string }) => n.body), ['Rolling back now'], 'the failed note was not stored');
  t.equal((await call(env, 'GET', `/tickets/${ticket.id}/thread-notes`, { token: other.admin.token })).statusCode, 404);
  const customer = await userFixture(env, tenant.id, 'customer');
  t.equal((await call(env, 'GET', `/tickets/${ticket.id}/thread-notes`, { token: customer.token })).statusCode, 403);

  const events = await rows(env, 'events', tenant.id, { type: 'ticket.extension_action' });
  t.same(events.map((e: any) => e.data.from), ['chat: open_thread']);
  const audit = (await rows(env, 'audit_log', tenant.id).whereLike('action', 'chatops.%')).map((a: any) => a.action).sort();
  t.same(audit, ['chatops.route_bound', 'chatops.route_bound', 'chatops.thread_note', 'chatops.thread_opened']);

  // Uninstalling the extension takes its routes and threads with it.
  t.equal((await call(env, 'DELETE', `/extensions/${chat.id}`, { token })).statusCode, 204);
  t.equal((await rows(env, 'chat_routes', tenant.id)).length, 0);
  t.equal((await rows(env, 'chat_threads', tenant.id)).length, 0);
  t.same(env.guard.violations, []);
});
