import { randomUUID } from 'node:crypto';
import t from 'tap';
import { exampleBody } from '../../helpers/routes.js';
import { apiKeyFixture, call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';
import { CLI_ACTOR } from '../../../src/core/context.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { createSession } from '../../../src/auth/sessions.js';
import { recordEvent } from '../../../src/events/record.js';
import { ticketFixture } from '../../helpers/ticket-fixture.js';
import { multipart } from '../../helpers/conversation.js';
import { createEndpoint } from '../../../src/webhooks/endpoints.js';
import { emitTicketChange } from '../../../src/events/emit/ticket-change.js';
import { csatUrlFor } from '../../../src/csat/surveys.js';
import { buildPlugin, manifestFor } from '../../helpers/plugins.js';
import { CONTEXT_ENTRYPOINTS, CONTEXT_PLUGIN } from '../../helpers/plugin-sources.js';
import { upload } from '../../helpers/kb.js';
import { runningKbJobs } from '../../../src/kb/jobs.js';

/**
 * Walks EVERY registered route as tenant B, aimed at tenant A's resources, and asserts that B can
 * neither see nor touch them: routes with ids answer 404, lists show none of A's data, anonymous
 * calls to token routes answer 401. Routes added later are walked too; a path parameter this test
 * cannot fill with one of A's ids fails the test until a fixture for it is added below.
 */

// The walk grows with every route; give it time on a busy machine.
t.setTimeout(300_000);

t.test('no route lets one tenant reach another tenant', async (t) => {
  const keys = licenseKeys();
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem });
  const a = await tenantFixture(env, 'tenant-a');
  const b = await tenantFixture(env, 'tenant-b');
  // Every feature for both, so the walk tests isolation and not licensing.
  await grantLicense(env, a.id, keys);
  await grantLicense(env, b.id, keys);

  // Tenant A's resources: their ids fill path parameters; their ids and emails must never appear in B's answers.
  const aCustomer = await userFixture(env, a.id, 'customer', 'secret-customer@tenant-a.example.com');
  const aAgent = await userFixture(env, a.id, 'agent', 'secret-agent@tenant-a.example.com');
  const aKey = await apiKeyFixture(env, a.id, a.admin.id, ['users:read']);
  // The ticket desk: a type, a custom field, a status and a ticket of A.
  const aType = (await call(env, 'POST', '/ticket-types', { token: a.admin.token, body: { name: 'Secret type of A' } })).json();
  const aField = (await call(env, 'POST', '/custom-fields', { token: a.admin.token, body: { key: 'secret_serial', label: 'Serial', kind: 'text' } })).json();
  const aStatus = (await call(env, 'GET', '/meta/statuses', { token: a.admin.token })).json().data[0];
  const aTicket = (await call(env, 'POST', '/tickets', {
    token: a.admin.token, body: { subject: 'Secret subject of A', body: 'Secret body of A', requester_id: aCustomer.id, type_id: aType.id, secret_serial: 'SN-A-1' },
  })).json();
  const aPost = async (path: string, body: unknown) => {
    const res = await call(env, 'POST', path, { token: a.admin.token, body });
    if (res.statusCode !== 201) throw new Error(`fixture ${path}: ${res.statusCode} ${res.body}`);
    return res.json() as { id: string };
  };
  const aOrg = await aPost('/organizations', { name: 'Secret Org of A', domains: ['tenant-a.example.com'] });
  const aTeam = await aPost('/teams', { name: 'Secret Team of A' });
  await aPost(`/teams/${aTeam.id}/members`, { user_id: aAgent.id, is_lead: true });
  const aSkill = await aPost('/skills', { name: 'Secret Skill of A' });
  await call(env, 'POST', `/users/${aAgent.id}/skills/${aSkill.id}`, { token: a.admin.token });
  // A ticket of A's organization and team (its requester joins the organization by domain), so
  // /organizations/:id/tickets and /users/:id/tickets have A's data to keep from B.
  const aMember = await userFixture(env, a.id, 'customer', 'member@tenant-a.example.com');
  const aOrgTicket = await aPost('/tickets', { subject: 'Secret org ticket of A', body: 'Secret', requester_id: aMember.id, team_id: aTeam.id });
  // A committed ticket event of A: the live stream, replayed from the start (its example query),
  // must not carry it to B.
  // A's browser push subscription (stored directly: its endpoint need not pass the outbound rules
  // here) and a CSAT survey on A's ticket, with its token.
  const aSubscription = { id: '01900000-0000-7000-8000-00000000a5b5', endpoint: 'https://push.tenant-a.example.com/secret-endpoint-of-a' };
  await env.deps.db('push_subscriptions').insert({ tenant_id: a.id, id: aSubscription.id, user_id: aAgent.id, endpoint: aSubscription.endpoint,
    p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM', auth: 'tBHItJI5svbpez7KI4CCXg', created_at: new Date() });
  await call(env, 'PATCH', '/csat/settings', { token: a.admin.token, body: { enabled: true, question: 'Secret question of A' } });
  const aResolved = (await call(env, 'GET', '/meta/statuses', { token: a.admin.token })).json().data.find((s: { key: string }) => s.key === 'resolved');
  await call(env, 'PATCH', `/tickets/${aTicket.id}`, { token: a.admin.token, body: { status_id: aResolved.id } });
  const aSurveyUrl = await inTransaction(env.deps, { tenantId: a.id, actor: CLI_ACTOR, now: new Date() }, (ctx) => csatUrlFor(ctx, aTicket.id));
  if (!aSurveyUrl) throw new Error('fixture: no CSAT survey for A\'s ticket');
  const aSurveyToken = aSurveyUrl.split('/').pop()!;
  // A rated it: the reports (CSAT ratings, agents, overview) of A have A's rating to keep from B.
  const aRating = await call(env, 'POST', `/csat/${aSurveyToken}`, { body: { score: 5, comment: 'Secret rating comment of A' } });
  if (aRating.statusCode !== 200) throw new Error(`fixture rating: ${aRating.statusCode} ${aRating.body}`);
  const aEvent = await inTransaction(env.deps, { tenantId: a.id, actor: CLI_ACTOR, now: new Date() }, (ctx) =>
    recordEvent(ctx, { type: 'ticket.created', subjectType: 'ticket', ticketId: aTicket.id, data: { requester_email: aCustomer.email } }));
  // Ticket operations: a second ticket linked to the first, and a time entry.
  const aOtherTicket = await ticketFixture(env, a.id, aCustomer.id);
  const link = await call(env, 'POST', `/tickets/${aTicket.id}/links`, { token: a.admin.token, body: { target_ticket_id: aOtherTicket.id } });
  const entry = await call(env, 'POST', `/tickets/${aTicket.id}/time-entries`, { token: a.admin.token, body: { minutes: 5 } });
  t.equal(link.statusCode + entry.statusCode, 402, "A's link and time entry exist");
  // A conversation of A: a reply with a file on that ticket.
  const aMessage = (await call(env, 'POST', `/tickets/${aTicket.id}/messages`, { token: a.admin.token, body: { body: 'secret reply of tenant A' } })).json();
  const aForm = multipart([{ filename: 'secret-a.txt', type: 'text/plain', content: 'secret file of tenant A' }]);
  const aAttachment = (await call(env, 'POST', `/tickets/${aTicket.id}/messages/${aMessage.id}/attachments`, { token: a.admin.token, body: aForm.payload, headers: aForm.headers })).json().data[0];
  // SLA configuration of A: a holiday, and A's priorities (created with the tenant); the type above.
  const aHoliday = (await call(env, 'POST', '/business-hours/holidays', { token: a.admin.token, body: { name: 'Secret holiday', date: '2026-07-14' } })).json().id as string;
  const aPriority = (await env.deps.db('priorities').where({ tenant_id: a.id, key: 'high' }).first('id')).id as string;
  const aWebhook = await inTransaction(env.deps, { tenantId: a.id, actor: CLI_ACTOR, now: new Date() }, async (ctx) => {
    const endpoint = await createEndpoint(ctx, { name: 'A hook', url: 'https://8.8.8.8/secret-hook-of-a', events: ['ticket.status_changed'] });
    await emitTicketChange(ctx, 'ticket.status_changed', { ticketId: endpoint.id, from: 'Open', to: 'Pending' });
    return endpoint;
  });
  const aDelivery = await env.deps.db('webhook_deliveries').where({ tenant_id: a.id }).first('id');
  // Dead, so that a retry by A itself would be allowed: B must still get 404, not 409.
  await env.deps.db('webhook_deliveries').where({ tenant_id: a.id }).update({ status: 'dead', next_attempt_at: null });
  // Automation: a tag, a saved filter, a macro, a canned response and a routing rule of A.
  const aTag = await aPost('/tags', { name: 'secret-tag-of-a', color: '#123456' });
  const aFilter = await aPost('/saved-filters', { name: 'Secret filter of A', conditions: [{ field: 'tag', operator: 'eq', value: 'secret-tag-of-a' }] });
  const aMacro = await aPost('/macros', { name: 'Secret macro of A', actions: [{ type: 'add_tag', value: 'secret-tag-of-a' }] });
  const aCanned = await aPost('/canned-responses', { title: 'Secret canned of A', shortcut: 'secret-a', body: 'Secret canned body of A' });
  const aRule = await aPost('/routing-rules', { name: 'Secret rule of A', conditions: [], actions: [{ type: 'require_skill', value: aSkill.id }] });
  // A meeting of A on A's ticket (before the mail settings: its invitations find no SMTP at once).
  const aMeeting = await aPost('/meetings', {
    title: 'Secret meeting of A', start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T10:00:00Z', ticket_id: aTicket.id,
    attendees: [{ user_id: aAgent.id }, { email: 'secret-guest@tenant-a.example.com' }],
  });
  // A's calendar connector (a public address literal: registering does not connect).
  const aConnector = await call(env, 'PUT', '/connectors/calendar_a', { token: a.admin.token, body: { client_id: 'secret-client-of-a', client_secret: 'secret-client-secret-of-a', base_url: 'https://93.184.215.15/secret-calendar-of-a' } });
  if (aConnector.statusCode !== 200) throw new Error(`fixture connector: ${aConnector.statusCode} ${aConnector.body}`);
  // The email channel: A's mail settings (a public address literal: saving does not connect) and an edited template.
  const aMail = await call(env, 'POST', '/mail-settings', { token: a.admin.token, body: {
    smtp: { host: '93.184.215.14', port: 587, security: 'starttls', username: 'secret-smtp-user-of-a', password: 'pw', from_address: 'desk@tenant-a.example.com' },
  } });
  if (aMail.statusCode !== 200) throw new Error(`fixture /mail-settings: ${aMail.statusCode} ${aMail.body}`);
  const aTemplate = await call(env, 'PATCH', '/notification-templates/ticket.resolved', { token: a.admin.token, body: { subject: 'Secret template of A' } });
  if (aTemplate.statusCode !== 200) throw new Error(`fixture template: ${aTemplate.statusCode} ${aTemplate.body}`);

  // A run of the legacy import of A (the row only: its source is never contacted here).
  const aImport = (await call(env, 'POST', '/legacy-import', { token: a.admin.token, body: { source: 'mysql://reader@127.0.0.1:1/secret_import_of_a' } })).json().id as string;

  // An installed extension of A (its name is the {provider} of the staff routes), linked to A's ticket.
  const aExt = await aPost('/extensions', {
    manifest: manifestFor({ name: 'secret-ext-of-a', entrypoints: CONTEXT_ENTRYPOINTS, read_ops: ['list_projects'], scopes: { webhook: false } }),
    module_base64: Buffer.from(await buildPlugin(CONTEXT_PLUGIN)).toString('base64'),
  });
  const aExtLink = await call(env, 'POST', `/tickets/${aTicket.id}/extension-link/secret-ext-of-a`, { token: a.admin.token, body: { external_id: 'SECRET-EXT-ID-A' } });
  if (aExtLink.statusCode !== 200) throw new Error(`fixture extension link: ${aExtLink.statusCode} ${aExtLink.body}`);
  // Chat-ops rows of A (a team's channel, the ticket's chat thread, a thread note), stored as the services store them.
  const aNow = new Date();
  await env.deps.db('chat_routes').insert({ tenant_id: a.id, extension_id: aExt.id, team_id: aTeam.id, channel_id: 'SECRET-CHANNEL-A', channel_name: '#secret-a', created_at: aNow, updated_at: aNow });
  await env.deps.db('chat_threads').insert({ tenant_id: a.id, ticket_id: aTicket.id, extension_id: aExt.id, channel_id: 'SECRET-CHANNEL-A', thread_id: 'SECRET-THREAD-A', created_at: aNow });
  await env.deps.db('thread_notes').insert({ tenant_id: a.id, id: randomUUID(), ticket_id: aTicket.id, author_name: 'A', body: 'Secret thread note of A', created_at: aNow });
  // Knowledge base: a category, a published public article and an internal one, an ingested document, a crawl.
  const aKbCategory = await aPost('/kb-categories', { name: 'Secret KB category of A', slug: 'secret-kb-category-a' });
  const aKbArticle = await aPost('/kb-articles', {
    category_id: aKbCategory.id, title: 'Secret KB article of A', slug: 'secret-kb-slug-a', status: 'published',
    body: 'To reset your password, follow the secret KB answer of A.',
  });
  await aPost('/kb-articles', { category_id: aKbCategory.id, title: 'Secret internal KB article of A', slug: 'secret-kb-internal-a', status: 'published', visibility: 'internal', body: 'Reset my password with the secret internal runbook of A.' });
  const aKbUpload = await upload(env, a.admin.token, 'secret-kb-doc-a.txt', 'How do I reset my password? The secret kb passage of tenant A explains it.', 'text/plain');
  await runningKbJobs();
  const aKbCrawl = randomUUID();
  await env.deps.db('kb_crawls').insert({ tenant_id: a.id, id: aKbCrawl, url: 'https://8.8.8.8/secret-crawl-of-a', max_pages: 5, status: 'completed', created_at: aNow });

  // Live chat of A: a bot flow, a widget, a visitor's conversation the bot handed off (ticket, session), a block.
  const aFlow = await aPost('/bot-flows', { name: 'Secret flow of A', active: true, start_node: 'ask', nodes: [
    { id: 'ask', type: 'collect', text: 'Secret question of the bot of A', field: 'name', next: 'human' },
    { id: 'human', type: 'handoff', text: 'Secret handoff of A' }] });
  const aWidget = await aPost('/webchat/widgets', { name: 'Secret widget of A', allowed_origins: ['https://secret-site-of-a.example.com'], bot_flow_id: aFlow.id });
  const aChat = await call(env, 'POST', `/webchat/widgets/${aWidget.id}/conversations`, {
    headers: { origin: 'https://secret-site-of-a.example.com' }, body: { email: 'secret-visitor@tenant-a.example.com', message: 'Secret chat line of A' } });
  if (aChat.statusCode !== 201) throw new Error(`fixture chat: ${aChat.statusCode} ${aChat.body}`);
  const aVisitorToken = aChat.json().visitor_token as string;
  await call(env, 'POST', '/webchat/visitor/messages', { headers: { authorization: `Bearer ${aVisitorToken}`, origin: 'https://secret-site-of-a.example.com' }, body: { message: 'Secret Visitor Name A' } });
  const aSession = await env.deps.db('bot_sessions').where({ tenant_id: a.id }).first('id');
  const aBlock = await aPost('/webchat/blocks', { visitor_id: aChat.json().visitor_id, reason: 'Secret block reason of A' });
  // Channels and web forms: a source with secrets (masked to A, invisible to B), a synced template, a form.
  const aSource = (await call(env, 'POST', '/channel-sources', { token: a.admin.token, body: { channel: 'messaging_a', name: 'Secret source of A', config: {
    api_base_url: 'https://93.184.215.16/secret-graph-of-a', phone_number_id: 'SECRET-PN-A', business_account_id: 'SECRET-WABA-A',
    access_token: 'secret-wa-token-of-a', app_secret: 'secret-app-secret-of-a', verify_token: 'secret-verify-of-a',
  } } })).json();
  t.ok(aSource.id, 'A connects a channel source');
  await env.deps.db('channel_templates').insert({ tenant_id: a.id, id: randomUUID(), source_id: aSource.id, name: 'secret_template_of_a', language: 'en', status: 'approved', components: '[]', created_at: aNow, updated_at: aNow });
  const aWebform = (await call(env, 'POST', '/webforms', { token: a.admin.token, body: { title: 'Secret form of A', fields: [{ name: 'email', type: 'email', required: true }] } })).json();
  t.ok(aWebform.id, 'A defines a web form');

  // Administration: a custom role of A, A's branding, and a (dry) archive run of A.
  const aRole = await aPost('/roles', { name: 'Secret role of A', description: 'Secret role description of A' });
  await call(env, 'PUT', `/roles/${aRole.id}/permissions`, { token: a.admin.token, body: { tickets: ['list', 'view'] } });
  const aBrand = await call(env, 'PATCH', '/branding', { token: a.admin.token, body: {
    name: 'Secret brand of A', footer_html: '<p>Secret footer of A</p>', support_email: 'secret-support@tenant-a.example.com', logo_url: 'https://cdn.tenant-a.example.com/secret-logo.png',
  } });
  if (aBrand.statusCode !== 200) throw new Error(`fixture branding: ${aBrand.statusCode} ${aBrand.body}`);
  const aArchiveRun = await call(env, 'POST', '/ticket-archiver/run', { token: a.admin.token, body: { dry_run: true } });
  if (aArchiveRun.statusCode !== 202) throw new Error(`fixture archive run: ${aArchiveRun.statusCode} ${aArchiveRun.body}`);

  /** Path parameter → one of A's ids, keyed by the path segment before `:id`, or by the parameter name. */
  const aIds: Record<string, string> = {
    users: aCustomer.id,
    'api-keys': aKey.id,
    userId: aAgent.id,
    statuses: aStatus.id,
    'ticket-types': aType.id,
    'custom-fields': aField.id,
    tickets: aTicket.id,
    organizations: aOrg.id,
    teams: aTeam.id,
    skills: aSkill.id,
    skillId: aSkill.id,
    customers: aCustomer.id,
    linkId: link.json().id,
    entryId: entry.json().id,
    msgId: aMessage.id,
    attachments: aAttachment.id,
    holidays: aHoliday,
    priorityId: aPriority,
    typeId: aType.id,
    'webhook-endpoints': aWebhook.id,
    'webhook-deliveries': aDelivery.id,
    deliveryId: aDelivery.id,
    tags: aTag.id,
    'saved-filters': aFilter.id,
    macros: aMacro.id,
    macroId: aMacro.id,
    'canned-responses': aCanned.id,
    'routing-rules': aRule.id,
    subscriptions: aSubscription.id,
    'legacy-import': aImport,
    extensions: aExt.id,
    provider: 'secret-ext-of-a',
    op: 'list_projects',
    meetings: aMeeting.id,
    'kb-categories': aKbCategory.id,
    'kb-articles': aKbArticle.id,
    'kb-documents': aKbUpload.json().id,
    'kb-crawls': aKbCrawl,
    locale: 'en',
    'bot-flows': aFlow.id,
    'bot-flow-sessions': aSession.id,
    widgets: aWidget.id,
    conversations: aChat.json().conversation_id,
    blocks: aBlock.id,
    'channel-sources': aSource.id,
    webforms: aWebform.id,
    roles: aRole.id,
  };
  /** Path parameters that name no tenant resource (the same for every tenant): B reaches its own. */
  const sharedParams: Record<string, string> = {
    identifier: 'ticket.resolved',
    // A connector product: B reaches its own registration and account.
    provider: 'calendar_a',
  };
  const secrets = [a.id, a.admin.id, a.admin.email, aCustomer.id, aCustomer.email, aAgent.id, aAgent.email,
    aKey.id, aKey.prefix, aType.id, aType.name, aField.id, 'secret_serial', aStatus.id, aTicket.id,
    'Secret subject of A', 'SN-A-1', aOrg.id, 'Secret Org of A', 'tenant-a.example.com', aTeam.id,
    'Secret Team of A', aSkill.id, 'Secret Skill of A', aEvent.id, aMember.id, aOrgTicket.id,
    'Secret org ticket of A', aOtherTicket.id, link.json().id, entry.json().id, 'Secret body of A',
    aMessage.id, 'secret reply of tenant A', aAttachment.id, 'secret-a.txt', 'secret file of tenant A',
    aHoliday, aPriority, aWebhook.id, aWebhook.url, aWebhook.secret, aDelivery.id, aTag.id,
    'secret-tag-of-a', aFilter.id, 'Secret filter of A', aMacro.id, 'Secret macro of A', aCanned.id,
    'Secret canned', aRule.id, 'Secret rule of A', aSubscription.id, aSubscription.endpoint,
    'Secret question of A', 'Secret rating comment of A', aSurveyToken, '93.184.215.14', 'secret-smtp-user-of-a', 'Secret template of A',
    a.id.replace(/-/g, ''), aImport, 'secret_import_of_a', aExt.id, 'secret-ext-of-a', 'SECRET-EXT-ID-A',
    aMeeting.id, 'Secret meeting of A', 'secret-guest@tenant-a.example.com', 'secret-client-of-a', 'secret-client-secret-of-a', 'secret-calendar-of-a',
    'SECRET-CHANNEL-A', 'SECRET-THREAD-A', 'Secret thread note of A',
    aKbCategory.id, 'Secret KB category of A', aKbArticle.id, 'Secret KB article of A', 'secret-kb-slug-a', 'secret KB answer of A',
    'secret-kb-internal-a', 'secret internal runbook of A', aKbUpload.json().id, 'secret-kb-doc-a', 'secret kb passage of tenant A', aKbCrawl, 'secret-crawl-of-a',
    aFlow.id, 'Secret flow of A', 'Secret question of the bot of A', aWidget.id, 'Secret widget of A', 'secret-site-of-a', aChat.json().conversation_id,
    aChat.json().visitor_id, aVisitorToken, 'secret-visitor@tenant-a.example.com', 'Secret chat line of A', 'Secret Visitor Name A', aSession.id,
    aBlock.id, 'Secret block reason of A',
    aSource.id, 'Secret source of A', 'secret-graph-of-a', 'SECRET-PN-A', 'SECRET-WABA-A', 'secret-wa-token-of-a', 'secret-app-secret-of-a',
    'secret-verify-of-a', 'secret_template_of_a', aWebform.id, 'Secret form of A',
    aRole.id, 'Secret role of A', 'Secret role description of A', 'Secret brand of A', 'Secret footer of A', 'secret-logo.png',
    aArchiveRun.json().run_id];

  const freshBToken = () =>
    inTransaction(env.deps, { tenantId: b.id, actor: CLI_ACTOR, now: new Date() }, (ctx) => createSession(ctx, b.admin.id).then((s) => s.token));

  const defs = env.app.routeDefs.filter((d) => d.access.kind !== 'public');
  t.ok(defs.length >= 10, `walking ${defs.length} routes`);

  for (const def of defs) {
    const label = `${def.method} ${def.url}`;
    const params = [...def.url.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    let unresolved = false;
    const path = def.url.replace(/([\w-]+)\/:(\w+)/g, (_all, segment: string, param: string) => {
      const id = aIds[param] ?? sharedParams[param] ?? (param === 'id' ? aIds[segment] : undefined);
      if (!id) unresolved = true;
      return `${segment}/${id}`;
    });
    if (unresolved) {
      t.fail(`${label}: no fixture of tenant A for its path parameters (${params.join(', ')}); add one to aIds`);
      continue;
    }
    const body = exampleBody(def);
    const query = def.example?.query;

    // As B (token decides the tenant), also when B names A in the tenant header.
    const headerSets: Array<Record<string, string>> = [{}, { 'x-helpdesk-tenant': a.slug }];
    for (const headers of headerSets) {
      const res = await call(env, def.method, path, { token: await freshBToken(), body, query, headers });
      const where = `${label} as tenant B${Object.keys(headers).length ? ' naming A in X-Helpdesk-Tenant' : ''}`;
      t.not(res.statusCode, 500, `${where}: no server error (${res.body.slice(0, 200)})`);
      if (params.length && !params.every((p) => p in sharedParams)) t.equal(res.statusCode, 404, `${where}: A's resource is not found (${res.body.slice(0, 160)})`);
      // The 404 message may echo the id the caller sent itself; anything else of A is a leak.
      const leaked = secrets.filter((s) => res.body.includes(s) && !path.includes(s));
      t.same(leaked, [], `${where}: leaks nothing of A`);
    }

    // Anonymous: token routes refuse; tenant routes aimed at A with B's CSRF token refuse too.
    if (def.access.kind === 'token') {
      const res = await call(env, def.method, path, { body, query });
      t.equal(res.statusCode, 401, `${label} anonymous: 401`);
    }
  }

  // Shared path parameters reached B's own records; A's stay as A left them.
  const aTemplates = (await call(env, 'GET', '/notification-templates', { token: a.admin.token })).json().data;
  t.equal(aTemplates.find((x: { identifier: string }) => x.identifier === 'ticket.resolved').subject, 'Secret template of A', "A's template untouched");

  // Reports: B filtering by A's team finds nothing of A; A's own report with it finds A's ticket.
  const report = async (token: string) => (await call(env, 'GET', '/reports/overview', { token, query: { team_id: aTeam.id } })).json();
  t.equal((await report(b.admin.token)).total_tickets_created, 0, "B's report with A's team counts nothing");
  t.equal((await report(a.admin.token)).total_tickets_created, 1, "A's report with its team counts A's ticket");

  t.same(env.guard.violations, [], 'no query touched a tenant-owned table without tenant_id');
});

t.test('a CSRF token of one tenant is refused by another', async (t) => {
  const env = await testApp(t);
  const a = await tenantFixture(env, 'csrf-a');
  const b = await tenantFixture(env, 'csrf-b');
  const csrfRoutes = env.app.routeDefs.filter((d) => d.access.kind === 'csrf');
  const bCsrf = (await call(env, 'GET', '/auth/csrf', { tenant: b.slug })).json().csrf_token as string;
  t.ok(bCsrf, 'B obtained a CSRF token');
  for (const def of csrfRoutes) {
    const res = await call(env, def.method, def.url, { tenant: a.slug, csrf: bCsrf, body: exampleBody(def) });
    t.equal(res.statusCode, 403, `${def.method} ${def.url}: 403`);
    t.equal(res.json().code, 'csrf_invalid');
  }
  const unknownTenant = await call(env, 'GET', '/auth/csrf', { tenant: 'no-such-tenant' });
  t.equal(unknownTenant.statusCode, 404);
  t.equal(unknownTenant.json().code, 'tenant_not_found');
  const noTenant = await call(env, 'GET', '/auth/csrf');
  t.equal(noTenant.json().code, 'tenant_not_found');
});
