import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { apiKeyFixture, csrfToken, tenantFixture, userFixture, type TestEnv } from '../app.js';
import { grantLicense, type LicenseKeys } from '../license.js';
import { requestsFor, type FuzzRequest, type IdPool } from './requests.js';
import { snapshotQuery, writeCounter } from './snapshot.js';
import { runningKbJobs } from '../../../src/kb/jobs.js';
import { API_PREFIX, type RouteDef } from '../../../daemon/route.js';
import { documentPath } from '../../../daemon/openapi/document.js';
import { CLI_ACTOR } from '../../../src/core/context.js';
import { ERROR_TABLE, type ErrorCode } from '../../../src/core/errors.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { createSession } from '../../../src/auth/sessions.js';
import { multipart } from '../conversation.js';
import { inboundTokenFor } from '../../../src/mail/inbound-token.js';
import { runningArchives } from '../../../src/archiver/runs.js';

/**
 * The API fuzzer: sends generated requests (requests.ts) to routes of a real app, as an admin, a
 * customer and anonymously, and checks every answer against the contract and the OpenAPI
 * document. It returns the first failure of each route instead of asserting, so a test can also
 * prove that it catches what it should (test/integration/security/api-fuzz.test.ts).
 */

/** 422 answers to valid requests that are right: rules that need data, not form. */
export const SERVICE_RULES: Array<{ field: RegExp; route?: string; reason: string }> = [
  { field: /^timezone$/, reason: 'an IANA zone name: only the zone database knows them' },
  { field: /^scopes\.\d+$/, reason: 'a scope of the catalogue (src/auth/scopes.ts)' },
  { field: /^expires_at$/, reason: 'must lie in the future: depends on now' },
  { field: /^token$/, route: 'POST /auth/reset-password', reason: 'a reset or invitation token the API issued' },
  { field: /^current_password$/, route: 'PATCH /auth/me/password', reason: "the caller's actual password" },
  { field: /^password$/, route: 'POST /2fa/disable', reason: "the caller's actual password" },
  { field: /^license$/, route: 'POST /license', reason: 'a licence signed with the trusted key' },
  { field: /^cursor$/, reason: 'an opaque cursor the API issued' },
  { field: /^to$/, route: 'GET /audit-log', reason: 'later than from: a rule across two fields' },
  { field: /^(requester_id|requester|status_id|priority_id|type_id|assigned_agent_id|team_id)$/, reason: 'names a record (status, priority, type, user, team) of the tenant' },
  { field: /^custom_fields\.[a-z0-9_]+$/, reason: "a value of the tenant's custom field of that key, of its kind" },
  ...['GET /tickets', 'GET /users/:id/tickets', 'GET /organizations/:id/tickets'].map((route) => (
    { field: /^conditions(\.\d+(\.(field|operator|value))?)?$/, route, reason: "conditions over the tenant's vocabularies and custom fields" })),
  { field: /^key$/, route: 'POST /custom-fields', reason: 'a key that names no ticket field' },
  { field: /^options(\.\d+)?$/, reason: "options fit the field's kind: select needs them, other kinds take none" },
  { field: /^organization_id$/, reason: 'an organization of this tenant: only the data knows which exist' },
  { field: /^domains\.\d+$/, reason: 'a domain no other organization of the tenant holds' },
  { field: /^user_id$/, route: 'POST /teams/:id/members', reason: 'a staff user of this tenant' },
  { field: /^until$/, route: 'POST /tickets/:id/snooze', reason: 'later than now, at most a year ahead' },
  { field: /^work_date$/, reason: 'a calendar day not after today: depends on now' },
  { field: /^(user_id|email|name)$/, route: 'POST /tickets/:id/collaborators', reason: 'either user_id or email (with an optional name): a rule across fields' },
  { field: /^target_ticket_id$/, reason: 'must name another ticket than the path: a rule across fields' },
  { field: /^body(_html)?$/, route: 'POST /tickets/:id/messages', reason: 'body or body_html must hold text, HTML once sanitised: a rule across two fields' },
  { field: /^(schedule\.)?[a-z]+day(\.(open|close))?$/, route: 'PUT /business-hours', reason: "a day's fields together: open and close both, close after open, a closed day carries nothing else" },
  { field: /^schedule$/, route: 'PUT /business-hours', reason: 'one body shape or the other, not both' },
  ...['POST /legacy-import/test-connection', 'POST /legacy-import'].map((route) => (
    { field: /^source$/, route, reason: 'a mysql:// URL of a reachable osTicket database: only connecting tells' })),
  { field: /^source_timezone$/, route: 'POST /legacy-import', reason: 'an IANA zone name: only the zone database knows them' },
  ...['overview', 'volume', 'agents', 'me', 'sla-breaches', 'csat-ratings', 'run'].map((r) => `GET /reports/${r}`)
    .concat(['GET /analytics/overview', 'GET /analytics/heatmap'])
    .flatMap((route) => [
      { field: /^(from|to)$/, route, reason: 'from before to, at most 731 days apart: a rule across two fields' },
      { field: /^tz$/, route, reason: 'an IANA zone name: only the zone database knows them' },
    ]),
  { field: /^group_by$/, route: 'GET /reports/run', reason: "one of the chosen report's dimensions: a rule across two fields" },
  { field: /^url$/, route: 'POST /webhook-endpoints', reason: 'https:// and a public address: only DNS knows where a host points' },
  { field: /^url$/, route: 'PATCH /webhook-endpoints/:id', reason: 'https:// and a public address: only DNS knows where a host points' },
  { field: /^headers\./, route: 'POST /webhook-endpoints', reason: 'a header name of token characters, none of ours' },
  { field: /^headers\./, route: 'PATCH /webhook-endpoints/:id', reason: 'a header name of token characters, none of ours' },
  ...['POST /saved-filters', 'PATCH /saved-filters/:id', 'POST /routing-rules', 'PATCH /routing-rules/:id'].map((route) => (
    { field: /^conditions(\.\d+(\.(field|operator|value))?)?$/, route, reason: "conditions over the tenant's vocabularies and custom fields" })),
  ...['POST /macros', 'PATCH /macros/:id', 'POST /routing-rules', 'PATCH /routing-rules/:id'].map((route) => (
    { field: /^actions\.\d+\.value$/, route, reason: "an action's value names a record of the tenant or is text of its kind" })),
  ...['POST /canned-responses', 'PATCH /canned-responses/:id'].map((route) => ({ field: /^body$/, route, reason: 'placeholders of the known list only' })),
  { field: /^ticket_id$/, route: 'POST /canned-responses/:id/render', reason: 'a ticket of the tenant' },
  { field: /^field$/, route: 'GET /tickets/filter-values', reason: 'a condition field, or a custom field of the tenant' },
  { field: /^message_id$/, reason: 'a message of the ticket' },
  ...['POST /meetings', 'PUT /meetings/:id', 'PATCH /meetings/:id'].flatMap((route) => [
    { field: /^(start_at|starts_at|end_at|ends_at|video_provider|provider)$/, route, reason: 'either spelling, not two different values; end after start: rules across fields' },
    { field: /^recurrence_rule$/, route, reason: 'the RRULE subset: rules across its parts' },
    { field: /^join_url$/, route, reason: 'only for video_provider manual: a rule across fields' },
    { field: /^ticket_id$/, route, reason: 'a ticket of the tenant' },
    { field: /^attendees\.\d+\.user_id$/, route, reason: 'a staff user of the tenant or a participant of the linked ticket' },
  ]),
  { field: /^(to|attendee_ids)$/, route: 'GET /meetings/availability', reason: 'to after from, a window of at most 366 days; users of the tenant' },
  { field: /^ticket_ids$/, route: 'POST /tickets/bulk', reason: 'at least one change must come with the ids' },
  { field: /^endpoint$/, route: 'POST /push/subscriptions', reason: 'the URL of a push service that passes the outbound target rules' },
  { field: /^keys\.(p256dh|auth)$/, route: 'POST /push/subscriptions', reason: 'a P-256 public key and a 16-byte secret a browser generated' },
  { field: /^(smtp|imap)\.host$/, route: 'POST /mail-settings', reason: 'a host that resolves to a public address (the outbound-target rules)' },
  { field: /^(manifest(\..+)?|module_base64)$/, route: 'POST /extensions', reason: "a plugin manifest checked against the module's exports, and a WebAssembly module: only compiling it tells" },
  { field: /^config\..+$/, route: 'PATCH /extensions/:id/config', reason: "a config key the extension's manifest declares" },
  { field: /^op$/, route: 'POST /tickets/:id/extension-actions/:provider', reason: "an action entrypoint of the extension's manifest" },
  ...['POST /kb-articles', 'PATCH /kb-articles/:id'].map((route) => (
    { field: /^category_id$/, route, reason: 'a knowledge base category of the tenant' })),
  { field: /^url$/, route: 'POST /kb-documents/crawl', reason: 'a site whose host resolves to a public address (the outbound-target rules)' },
  ...['POST /bot-flows', 'PATCH /bot-flows/:id'].map((route) => (
    { field: /^(start_node|nodes(\.\d+(\.(id|next|field|text|choices(\.\d+\.target_node)?))?)?)$/, route, reason: 'a bot flow graph: every next and target_node names a node, start_node is one, node types decide which keys they carry (rules across nodes)' })),
  { field: /^bot_flow_id$/, route: 'POST /webchat/widgets', reason: 'a bot flow of the tenant' },
  { field: /^visitor_id$/, route: 'POST /webchat/blocks', reason: 'a chat visitor of the tenant' },
  ...['POST /channel-sources', 'PATCH /channel-sources/:id'].map((route) => (
    { field: /^config\..+$/, route, reason: "the channel's own config keys (CONTRACT §17: which keys, which are required) and an api_base_url that passes the outbound target rules" })),
  { field: /^fields(\[\d+\]\.name)?$/, route: 'POST /webforms', reason: 'exactly one email field and unique, unreserved names: rules across the list' },
  { field: /^(source_id|name)$/, route: 'POST /integrations/messaging_a/templates', reason: 'a connected messaging_a source with a business account, and a template the vendor accepts' },
  { field: /^(ticket_id|template_name)$/, route: 'POST /integrations/messaging_a/templates/send', reason: "a messaging_a conversation of the tenant and an approved template of its source" },
  { field: /.*/, route: 'POST /webforms/:id/submissions', reason: "the form's own fields (required ones, an email address), nothing else, and an empty honeypot: the form decides" },
  { field: /^role$/, route: 'PATCH /users/:id/role', reason: "a system role or the name of one of the tenant's custom roles: only the data knows them" },
  { field: /^logo_url$/, route: 'PATCH /branding', reason: 'an https URL that a URL parser accepts (a real host name and port), without credentials' },
];

const FORM_REFUSALS = new Set([400, 413, 415, 422]);
const ERROR_KEYS = new Set(['code', 'message', 'details', 'request_id']);

type Identity = 'admin' | 'customer' | 'anonymous';

export interface FuzzFailure {
  route: string;
  message: string;
}

export interface FuzzOptions {
  runs: number;
  seed: number;
}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/** One seed per route, so adding a route does not change the requests of the others. */
function routeSeed(seed: number, label: string): number {
  return (seed + [...label].reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, 0)) | 0;
}

export async function fuzzRoutes(env: TestEnv, keys: LicenseKeys, defs: readonly RouteDef[], options: FuzzOptions): Promise<{ failures: FuzzFailure[]; sent: number }> {
  const tenant = await tenantFixture(env);
  // Every feature, so licensed routes are fuzzed past the licence check.
  await grantLicense(env, tenant.id, keys);
  const customer = await userFixture(env, tenant.id, 'customer');
  const agent = await userFixture(env, tenant.id, 'agent');
  const key = await apiKeyFixture(env, tenant.id, tenant.admin.id, ['users:read']);
  // The ticket desk: real records, so generated requests get past the 404 into the services.
  const adminCall = (method: 'GET' | 'POST', url: string, payload?: unknown) => env.app.inject({
    method, url: `${API_PREFIX}${url}`, headers: { authorization: `Bearer ${tenant.apiKey}` }, ...(payload ? { payload: payload as object } : {}),
  }).then((r) => r.json());
  const deskType = await adminCall('POST', '/ticket-types', { name: 'Fuzz type' });
  const deskField = await adminCall('POST', '/custom-fields', { key: 'fuzz_plan', label: 'Plan', kind: 'select', options: ['a', 'b'] });
  const deskStatus = (await adminCall('GET', '/meta/statuses')).data[1];
  const deskTicket = await adminCall('POST', '/tickets', { subject: 'Fuzz', body: 'Fuzz', requester_id: customer.id, type_id: deskType.id, fuzz_plan: 'a' });
  // Directory records, so routes with their ids are fuzzed past the 404.
  const created = async (path: string, body: unknown) =>
    (await env.app.inject({ method: 'POST', url: `${API_PREFIX}${path}`, headers: { authorization: `Bearer ${tenant.admin.token}` }, payload: body as object })).json().id as string;
  const organizationId = await created('/organizations', { name: 'Fuzz Org', domains: ['fuzz-org.test'] });
  const teamId = await created('/teams', { name: 'Fuzz Team' });
  const skillId = await created('/skills', { name: 'Fuzz Skill' });
  // A second ticket, so merges and links between two real tickets are tried too.
  const deskTicket2 = await adminCall('POST', '/tickets', { subject: 'Fuzz 2', body: 'Fuzz 2', requester_id: customer.id, fuzz_plan: 'b' });
  const csrf = await csrfToken(env, tenant.slug);
  // A conversation the customer may see: a staff reply with a file on their ticket.
  const reply = (await env.app.inject({
    method: 'POST', url: `${API_PREFIX}/tickets/${deskTicket.id}/messages`, headers: { authorization: `Bearer ${tenant.apiKey}` }, payload: { body: 'fuzz fixture reply' },
  })).json() as { id: string };
  const form = multipart([{ filename: 'fixture.txt', type: 'text/plain', content: 'fixture' }]);
  const attachment = (await env.app.inject({
    method: 'POST', url: `${API_PREFIX}/tickets/${deskTicket.id}/messages/${reply.id}/attachments`,
    headers: { authorization: `Bearer ${tenant.apiKey}`, ...form.headers }, payload: form.payload,
  })).json() as { data: Array<{ id: string }> };
  check(reply.id && attachment.data?.[0]?.id, 'the conversation fixtures could not be created');
  const doc = (await env.app.inject({ method: 'GET', url: `${API_PREFIX}/openapi.json` })).json();
  const snapshot = await snapshotQuery(env.deps.db);
  const writes = await writeCounter(env.deps.db);

  /** Real ids where a fixture exists, else a random one (then 404 is the documented answer). */
  const ids: IdPool = (segment, param) => {
    if (segment === 'users') return [customer.id, agent.id, tenant.admin.id, randomUUID()];
    if (segment === 'api-keys') return [key.id, randomUUID()];
    if (segment === 'statuses') return [deskStatus.id, randomUUID()];
    if (segment === 'ticket-types') return [deskType.id, randomUUID()];
    if (segment === 'custom-fields') return [deskField.id, randomUUID()];
    if (segment === 'tickets') return [deskTicket.id, randomUUID()];
    if (segment === 'organizations') return [organizationId, randomUUID()];
    if (segment === 'teams') return [teamId, randomUUID()];
    if (segment === 'skills') return [skillId, randomUUID()];
    if (segment === 'customers') return [customer.id, randomUUID()];
    if (segment === 'tickets') return [deskTicket.id, deskTicket2.id, randomUUID()];
    if (segment === 'tickets') return [deskTicket.id, deskTicket.id, randomUUID()];
    if (param === 'msgId') return [reply.id, reply.id, randomUUID()];
    if (segment === 'attachments') return [attachment.data[0]!.id, randomUUID()];
    if (segment === 'inbound' && param === 'token') return [inboundTokenFor(env.deps.box, tenant.id), randomUUID()];
    if (param === 'identifier') return ['ticket.created.customer', 'sla.warning', 'no.such.template'];
    return [randomUUID()];
  };

  /**
   * Tokens of the identities and the content fingerprint the next request starts from. A refused
   * request changes nothing (that is asserted), so both carry over; after an accepted one, which
   * may have signed out, deactivated or demoted a fixture, the fixtures are put back and fresh
   * sessions issued.
   */
  let state: { tokens: Record<Exclude<Identity, 'anonymous'>, string>; fingerprint: Record<string, string>; writes: string } | null = null;
  async function prepared() {
    if (state) return state;
    // Work an accepted request started in the background (a knowledge base upload's ingestion)
    // ends before the fingerprint is taken, so it is not blamed on the next request.
    await runningKbJobs();
    await env.deps.db('users').where({ tenant_id: tenant.id }).whereIn('id', [tenant.admin.id, customer.id, agent.id])
      .update({ active: true, custom_role_id: null, role: env.deps.db.raw("(case id when ? then 'admin' when ? then 'customer' else 'agent' end)", [tenant.admin.id, customer.id]) });
    // The fuzz tenant's sessions (the fixtures', and those valid sign-ins created) are of no more
    // use: dropping them keeps the fingerprint small.
    await env.deps.db('sessions').where({ tenant_id: tenant.id }).delete();
    const session = (userId: string) =>
      inTransaction(env.deps, { tenantId: tenant.id, actor: CLI_ACTOR, now: new Date() }, (ctx) => createSession(ctx, userId).then((s) => s.token));
    const tokens = { admin: await session(tenant.admin.id), customer: await session(customer.id) };
    // The write counter first: a write between the two readings then shows as a changed counter.
    const counted = await writes();
    state = { tokens, fingerprint: await snapshot(), writes: counted };
    return state;
  }

  function allowedRefusal(def: RouteDef, details: Array<{ field: string }> | undefined): boolean {
    const label = `${def.method} ${def.url}`;
    return Array.isArray(details) && details.length > 0 && details.every((d) =>
      SERVICE_RULES.some((rule) => rule.field.test(d.field) && (!rule.route || rule.route === label)));
  }

  async function send(def: RouteDef, request: FuzzRequest, who: Identity): Promise<void> {
    const { tokens, fingerprint: before } = await prepared();
    const token = who === 'anonymous' ? null : tokens[who];
    const headers: Record<string, string> = { 'x-helpdesk-tenant': tenant.slug, 'x-csrf-token': csrf };
    if (token) headers.authorization = `Bearer ${token}`;
    if (request.contentType) headers['content-type'] = request.contentType;
    const res = await env.app.inject({ method: request.method as 'GET', url: request.url, headers, ...(request.payload !== undefined ? { payload: request.payload } : {}) });
    const where = `${request.method} ${request.url.slice(0, 120)} as ${who} (${request.label}): ${res.statusCode} ${res.body.slice(0, 300)}`;

    check(res.statusCode < 500, `server error: ${where}`);
    check(res.headers['x-request-id'], `no X-Request-Id: ${where}`);
    check(res.headers['x-ratelimit-limit'], `no X-RateLimit-Limit: ${where}`);
    const operation = doc.paths[documentPath(def)]?.[def.method.toLowerCase()];
    check(operation, `${def.method} ${def.url} is not in the document`);

    if (res.statusCode >= 400) {
      const body = res.json() as { code: ErrorCode; message: string; details?: Array<{ field: string; message: string }>; request_id: string };
      check(body.code in ERROR_TABLE && ERROR_TABLE[body.code] === res.statusCode, `code and status disagree: ${where}`);
      check(typeof body.message === 'string' && body.message, `no message: ${where}`);
      check(body.request_id === res.headers['x-request-id'], `request_id is not the X-Request-Id: ${where}`);
      check(Object.keys(body).every((k) => ERROR_KEYS.has(k)), `unexpected keys in the error body: ${where}`);
      if (res.statusCode === 422) {
        check(Array.isArray(body.details) && body.details.every((d) => typeof d.field === 'string' && typeof d.message === 'string'), `422 without field problems: ${where}`);
      }
      if (res.statusCode === 429) check(res.headers['retry-after'], `429 without Retry-After: ${where}`);

      const routeGone = body.code === 'route_not_found';
      if (request.kind === 'method') check(routeGone && res.statusCode === 404, `an unusual method must be route_not_found: ${where}`);
      else if (!(routeGone && request.kind === 'path')) {
        const documented = operation.responses[String(res.statusCode)]?.['x-error-codes'] as string[] | undefined;
        check(documented?.includes(body.code), `undocumented answer ${res.statusCode} ${body.code} (documented: ${documented ?? 'none'}); declare it in the route's errors: ${where}`);
      }
      if (request.kind === 'valid' && FORM_REFUSALS.has(res.statusCode)) {
        check(allowedRefusal(def, body.details), `a valid request was refused for its form: ${where}`);
      }
      // No statement wrote since the fingerprint was taken: nothing changed. Otherwise compare.
      const counted = await writes();
      if (counted !== state!.writes) {
        const after = await snapshot();
        const changed = Object.keys(after).filter((table) => after[table] !== before[table]);
        if (changed.length) state = null;
        else state!.writes = counted;
        check(!changed.length, `a refused request changed ${changed.join(', ')}: ${where}`);
      }
    } else {
      state = null;
      // Work an accepted request started in the background (a queued archive run) ends before the
      // next request's fingerprint is taken.
      await runningArchives();
      check(request.kind === 'valid' || request.kind === 'path', `an invalid request was accepted: ${where}`);
      check(operation.responses[String(res.statusCode)], `undocumented success status: ${where}`);
    }
  }

  const identities = fc.constantFrom<Identity>('admin', 'customer', 'anonymous');
  const failures: FuzzFailure[] = [];
  let sent = 0;
  for (const def of defs) {
    const route = `${def.method} ${def.url}`;
    try {
      await fc.assert(
        fc.asyncProperty(requestsFor(def, def.root ? '' : API_PREFIX, ids), identities, async (request, who) => {
          sent += 1;
          await send(def, request, who);
        }),
        { seed: routeSeed(options.seed, route), numRuns: options.runs, endOnFailure: true },
      );
    } catch (error) {
      const cause = (error as Error & { cause?: Error }).cause;
      failures.push({ route, message: `${cause?.message ?? ''}\n${(error as Error).message}` });
    }
  }
  return { failures, sent };
}
