import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { vendorServer } from '../../helpers/vendor-server.js';
import { settleMirrors } from '../../../src/meetings/mirroring.js';
import { runJob } from '../../../src/jobs/runner.js';

/** Connectors (SPEC "Meeting rules" 2 and 6) against a local HTTP server standing in for the vendors. */
t.setTimeout(120_000);

t.test('connectors', async (t) => {
  const vendor = await vendorServer(t);
  const keys = licenseKeys();
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem, webhooksAllowPrivate: true });
  const tenant = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent');
  const colleague = await userFixture(env, tenant.id, 'agent');
  const accounts = () => env.deps.db('connector_accounts').where({ tenant_id: tenant.id, user_id: agent.id }).orderBy('provider');

  await t.test('an administrator registers each product once; the secret is encrypted and masked', async (t) => {
    for (const provider of ['video_a', 'calendar_a', 'calendar_b']) {
      const res = await call(env, 'PUT', `/connectors/${provider}`, { token: admin, body: { client_id: 'client-id', client_secret: 'client-secret', base_url: vendor.url } });
      t.equal(res.statusCode, 200, res.body);
      t.match(res.json(), { provider, client_id: 'client-id', client_secret: '********', base_url: vendor.url });
    }
    t.equal((await call(env, 'PUT', '/connectors/video_b', { token: agent.token, body: { client_id: 'x', client_secret: 'y', base_url: vendor.url } })).statusCode, 403, 'agents may not');
    const rows = await env.deps.db('meeting_connectors').where({ tenant_id: tenant.id });
    t.equal(rows.length, 3);
    t.ok(rows.every((r) => !String(r.client_secret_enc).includes('client-secret')), 'encrypted at rest');
    t.equal((await call(env, 'GET', '/connectors', { token: admin })).json().data.length, 3);
  });

  await t.test('an agent connects accounts through OAuth 2.0; tokens are stored encrypted; calendars subscribe', async (t) => {
    const start = await call(env, 'POST', '/connectors/video_a/authorize', { token: agent.token });
    t.equal(start.statusCode, 200, start.body);
    const url = new URL(start.json().authorize_url);
    t.equal(`${url.origin}${url.pathname}`, `${vendor.url}/oauth/authorize`);
    t.equal(url.searchParams.get('client_id'), 'client-id');
    t.equal(url.searchParams.get('state'), start.json().state);
    const badState = await call(env, 'POST', '/connectors/video_a/connect', { token: agent.token, body: { code: 'good-code', state: `${Date.now() + 60_000}.forged` } });
    t.equal(badState.statusCode, 422);
    const othersState = await call(env, 'POST', '/connectors/video_a/connect', { token: colleague.token, body: { code: 'good-code', state: start.json().state } });
    t.equal(othersState.statusCode, 422, 'a state is bound to its user');
    const badCode = await call(env, 'POST', '/connectors/video_a/connect', { token: agent.token, body: { code: 'bad-code', state: start.json().state } });
    t.equal(badCode.statusCode, 422);
    t.equal((await accounts()).length, 0, 'nothing half-written');
    for (const provider of ['video_a', 'calendar_a', 'calendar_b']) {
      const { state } = (await call(env, 'POST', `/connectors/${provider}/authorize`, { token: agent.token })).json();
      const res = await call(env, 'POST', `/connectors/${provider}/connect`, { token: agent.token, body: { code: 'good-code', state } });
      t.equal(res.statusCode, 200, res.body);
      t.match(res.json(), { provider, connected: true });
    }
    const rows = await accounts();
    t.same(rows.map((r) => r.provider), ['calendar_a', 'calendar_b', 'video_a']);
    t.ok(rows.every((r) => !/at-|rt-/.test(r.access_token_enc + r.refresh_token_enc)), 'tokens encrypted');
    t.ok(rows.filter((r) => r.provider.startsWith('calendar')).every((r) => r.subscription_id && r.subscription_expires_at > new Date()));
    t.equal((await call(env, 'GET', '/connectors/accounts', { token: agent.token })).json().data.length, 3);
  });

  let meetingId = '';
  await t.test('a video_a meeting gets its room; the organizer\'s calendars mirror it, detached', async (t) => {
    const res = await call(env, 'POST', '/meetings', { token: agent.token, body: {
      title: 'Room call', start_at: '2026-12-03T09:00:00Z', end_at: '2026-12-03T09:30:00Z', video_provider: 'video_a', attendees: [{ user_id: colleague.id }],
    } });
    t.equal(res.statusCode, 201, res.body);
    meetingId = res.json().id;
    t.match(res.json().join_url, /^https:\/\/video\.vendor\.example\/j\//);
    t.equal(vendor.rooms.size, 1);
    await settleMirrors();
    t.equal(vendor.events.size, 2, 'one event in each calendar');
    t.equal((await env.deps.db('meeting_mirrors').where({ tenant_id: tenant.id, meeting_id: meetingId })).length, 2);
    const noAccount = await call(env, 'POST', '/meetings', { token: colleague.token, body: { title: 'x', start_at: '2026-12-03T09:00:00Z', end_at: '2026-12-03T09:30:00Z', video_provider: 'video_a' } });
    t.equal(noAccount.statusCode, 422);
    t.equal(noAccount.json().details[0].field, 'video_provider');
  });

  await t.test('an expiring token is refreshed on demand and stored again', async (t) => {
    await env.deps.db('connector_accounts').where({ tenant_id: tenant.id, user_id: agent.id }).update({ expires_at: new Date(Date.now() + 10_000) });
    const before = vendor.tokensIssued;
    const patched = await call(env, 'PATCH', `/meetings/${meetingId}`, { token: agent.token, body: { title: 'Room call (moved)' } });
    t.equal(patched.statusCode, 200, patched.body);
    await settleMirrors();
    t.ok(vendor.tokensIssued > before, 'refreshed');
    t.ok([...vendor.events.values()].every((e) => e.title === 'Room call (moved)'), 'mirrors updated');
    t.ok((await accounts()).filter((r) => r.provider.startsWith('calendar')).every((r) => r.expires_at > new Date(Date.now() + 60_000)));
    t.ok(vendor.requests.some((r) => r.path === '/oauth/token' && r.form.grant_type === 'refresh_token'));
  });

  await t.test('availability adds the external busy blocks', async (t) => {
    vendor.busy = [{ start: '2026-12-04T10:00:00Z', end: '2026-12-04T11:00:00Z' }];
    const res = await call(env, 'GET', '/meetings/availability', { token: agent.token, query: { from: '2026-12-01T00:00:00Z', to: '2026-12-08T00:00:00Z', attendee_ids: agent.id } });
    t.equal(res.statusCode, 200, res.body);
    t.same(res.json().conflicts[0].busy_ranges.map((r: { source: string; start_at: string }) => [r.source, r.start_at]), [
      ['meeting', '2026-12-03T09:00:00.000Z'], ['calendar_a', '2026-12-04T10:00:00.000Z'], ['calendar_b', '2026-12-04T10:00:00.000Z'],
    ]);
  });

  await t.test('inbound calendar webhooks are verified', async (t) => {
    const rows = await accounts();
    const a = rows.find((r) => r.provider === 'calendar_a');
    const b = rows.find((r) => r.provider === 'calendar_b');
    const handshake = await env.app.inject({ method: 'POST', url: '/api/v1/integrations/calendar_a/webhook?validationToken=abc%20123', payload: {} });
    t.equal(handshake.statusCode, 200);
    t.equal(handshake.body, 'abc 123');
    t.match(handshake.headers['content-type'], /^text\/plain/);
    const forged = await env.app.inject({ method: 'POST', url: '/api/v1/integrations/calendar_a/webhook', payload: { value: [{ subscriptionId: a.subscription_id, clientState: 'wrong' }] } });
    t.equal(forged.statusCode, 403);
    const good = await env.app.inject({ method: 'POST', url: '/api/v1/integrations/calendar_a/webhook', payload: { value: [{ subscriptionId: a.subscription_id, clientState: env.deps.box.decrypt(a.subscription_secret_enc) }] } });
    t.equal(good.statusCode, 200, good.body);
    const forgedB = await env.app.inject({ method: 'POST', url: '/api/v1/integrations/calendar_b/webhook', headers: { 'x-goog-channel-id': b.subscription_id, 'x-goog-channel-token': 'wrong' } });
    t.equal(forgedB.statusCode, 403);
    const goodB = await env.app.inject({ method: 'POST', url: '/api/v1/integrations/calendar_b/webhook', headers: { 'x-goog-channel-id': b.subscription_id, 'x-goog-channel-token': env.deps.box.decrypt(b.subscription_secret_enc) } });
    t.equal(goodB.statusCode, 200, goodB.body);
    t.ok((await accounts()).filter((r) => r.provider.startsWith('calendar')).every((r) => r.last_notified_at), 'stamped');
  });

  await t.test('the hourly job renews subscriptions that end soon', async (t) => {
    const soon = new Date(Date.now() + 3_600_000);
    await env.deps.db('connector_accounts').where({ tenant_id: tenant.id }).whereNotNull('subscription_id').update({ subscription_expires_at: soon });
    const oldB = (await accounts()).find((r) => r.provider === 'calendar_b').subscription_id;
    const run = await runJob(env.deps, 'calendar-subscription-renewal', { now: new Date() });
    t.match(run, { status: 'succeeded' });
    const rows = (await accounts()).filter((r) => r.provider.startsWith('calendar'));
    t.ok(rows.every((r) => r.subscription_expires_at.getTime() > Date.now() + 2 * 86_400_000), 'extended');
    t.not(rows.find((r) => r.provider === 'calendar_b').subscription_id, oldB, 'calendar_b opened a new channel');
    t.ok(vendor.requests.some((r) => r.method === 'PATCH' && r.path.startsWith('/subscriptions/')));
    const again = await runJob(env.deps, 'calendar-subscription-renewal', { now: new Date() });
    t.match(again, { status: 'succeeded' });
  });

  await t.test('cancelling removes the mirrors and the room', async (t) => {
    const res = await call(env, 'POST', `/meetings/${meetingId}/cancel`, { token: agent.token, body: { reason: 'done' } });
    t.equal(res.statusCode, 200, res.body);
    await settleMirrors();
    await new Promise((r) => setTimeout(r, 50));
    t.equal(vendor.events.size, 0, 'remote events removed');
    t.equal((await env.deps.db('meeting_mirrors').where({ tenant_id: tenant.id })).length, 0);
    t.equal(vendor.rooms.size, 0, 'room removed');
    t.equal((await call(env, 'DELETE', '/connectors/calendar_b/account', { token: agent.token })).statusCode, 204);
    t.equal((await call(env, 'DELETE', '/connectors/calendar_b/account', { token: agent.token })).statusCode, 404);
  });
});
