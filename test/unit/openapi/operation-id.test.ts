import t from 'tap';
import { camelWord, deriveOperationId, isUrlSafeOperationId } from '../../../daemon/openapi/operation-id.js';

// The shapes of today's routes and of those the specification lists for later areas.
const cases: Array<[method: string, url: string, extra: { status?: number; list?: boolean }, expected: string]> = [
  ['GET', '/users', { list: true }, 'users.list'],
  ['POST', '/users', { status: 201 }, 'users.create'],
  ['GET', '/users/:id', {}, 'users.get'],
  ['PATCH', '/users/:id', {}, 'users.update'],
  ['DELETE', '/api-keys/:id', { status: 204 }, 'apiKeys.delete'],
  ['GET', '/users/seats', {}, 'users.seats.get'],
  ['PUT', '/users/instance-seat-quota', {}, 'users.instanceSeatQuota.put'],
  ['PATCH', '/users/:id/role', {}, 'users.role.update'],
  ['POST', '/users/:id/invite', { status: 202 }, 'users.invite'],
  ['POST', '/auth/login', {}, 'auth.login'],
  ['POST', '/auth/login/2fa', {}, 'auth.login.2fa'],
  ['POST', '/auth/register', { status: 201 }, 'auth.register'],
  ['POST', '/auth/forgot-password', { status: 202 }, 'auth.forgotPassword'],
  ['GET', '/auth/me', {}, 'auth.me.get'],
  ['PATCH', '/auth/me/password', { status: 204 }, 'auth.me.password.update'],
  ['GET', '/audit-log', { list: true }, 'auditLog.list'],
  ['GET', '/healthz', {}, 'healthz.get'],
  ['POST', '/license', {}, 'license.post'],
  ['GET', '/tickets', { list: true }, 'tickets.list'],
  ['POST', '/tickets/:id/messages', { status: 201 }, 'tickets.messages.create'],
  ['GET', '/tickets/:id/messages', { list: true }, 'tickets.messages.list'],
  ['POST', '/tickets/{id}/reply-lock', {}, 'tickets.replyLock'],
  ['DELETE', '/tickets/{id}/reply-lock', { status: 204 }, 'tickets.replyLock.delete'],
  ['POST', '/tickets/{id}/macros/{macroId}/apply', {}, 'tickets.macros.apply'],
  ['POST', '/tickets/bulk', {}, 'tickets.bulk'],
  ['GET', '/meta/statuses', { list: true }, 'meta.statuses.list'],
  ['PATCH', '/meta/statuses/{id}', {}, 'meta.statuses.update'],
  ['GET', '/ticket-types/{typeId}/sla-policies/{priorityId}', {}, 'ticketTypes.slaPolicies.get'],
  ['PUT', '/ticket-types/:typeId/sla-policies/:priorityId', {}, 'ticketTypes.slaPolicies.replace'],
  ['POST', '/integrations/messaging_a/webhook', {}, 'integrations.messagingA.webhook'],
  ['GET', '/kb-articles/public/{locale}/{slug}', {}, 'kbArticles.public.get'],
  ['GET', '/meetings/feed/{token}.ics', {}, 'meetings.feed.get'],
  ['GET', '/meetings/feed/:token.ics', {}, 'meetings.feed.get'],
  ['POST', '/meetings/feed-token/regenerate', {}, 'meetings.feedToken.regenerate'],
  ['POST', '/teams/:id/members', { status: 201 }, 'teams.members.create'],
  ['PATCH', '/teams/:id/members/:userId', {}, 'teams.members.update'],
  ['POST', '/2fa/setup', {}, '2fa.setup'],
  ['PUT', '/business-hours', {}, 'businessHours.put'],
];

t.test('operation ids derive from method and URL', async (t) => {
  for (const [method, url, extra, expected] of cases) {
    const id = deriveOperationId({ method, url, ...extra });
    t.equal(id, expected, `${method} ${url}`);
    t.ok(isUrlSafeOperationId(id), `${id} is URL-safe`);
  }
});

t.test('the derivation tells a create from an action and a list from a read', async (t) => {
  t.equal(deriveOperationId({ method: 'POST', url: '/users', status: 200 }), 'users.post', 'a POST answering 200 is no create');
  t.equal(deriveOperationId({ method: 'POST', url: '/users/:id/notes', status: 201 }), 'users.notes.create');
  t.equal(deriveOperationId({ method: 'GET', url: '/users/seats', list: true }), 'users.seats.list');
  // A singleton and an item under it would share a name: registration refuses that (openapi.test.ts).
  t.equal(deriveOperationId({ method: 'GET', url: '/license' }), deriveOperationId({ method: 'GET', url: '/license/:id' }));
});

t.test('camel case words and refusals', async (t) => {
  t.equal(camelWord('instance-seat-quota'), 'instanceSeatQuota');
  t.equal(camelWord('messaging_a'), 'messagingA');
  t.equal(camelWord('openapi.json'), 'openapiJson');
  t.throws(() => deriveOperationId({ method: 'GET', url: '/:id' }), /no static segment/);
  t.notOk(isUrlSafeOperationId('users list'));
  t.notOk(isUrlSafeOperationId('users/list'));
});
