import t from 'tap';
import { Type } from '@sinclair/typebox';
import { call, testApp, tenantFixture } from '../../helpers/app.js';
import { registerRoute, route, type RouteDef } from '../../../daemon/route.js';
import { errors } from '../../../src/core/errors.js';

// Routes that exist only in this test, to exercise the pipeline's cross-cutting behaviour.
const probeRoutes = [
  route({
    method: 'POST', url: '/_probe/echo', access: { kind: 'token', scope: 'users:read' }, summary: 'echo', tags: ['probe'],
    schema: {
      body: Type.Object({
        subject: Type.String({ minLength: 1, maxLength: 5_000_000 }),
        count: Type.Integer({ minimum: 1, maximum: 100 }),
        email: Type.String({ format: 'email', maxLength: 320 }),
      }, { additionalProperties: false }),
    },
    handler: async (_ctx, { body }) => body,
  }),
  route({
    method: 'GET', url: '/_probe/boom', access: { kind: 'public' }, summary: 'boom', tags: ['probe'], schema: {},
    handler: async (ctx) => {
      await ctx.trx.raw('select * from no_such_table_secret_name');
      return {};
    },
  }),
  route({
    method: 'POST', url: '/_probe/rollback', access: { kind: 'token', scope: 'admin' }, summary: 'rollback', tags: ['probe'], schema: {},
    handler: async (ctx) => {
      await ctx.trx('tenants').where({ id: ctx.tenantId }).update({ name: 'changed inside a failing transaction' });
      throw errors.conflict('refused after writing');
    },
  }),
] as RouteDef[];

t.test('operations endpoints and the error contract', async (t) => {
  const env = await testApp(t, { rateLimitPerMin: 1000 }, { extraRoutes: probeRoutes });
  const tenant = await tenantFixture(env);

  await t.test('healthz, readyz, metrics, openapi', async (t) => {
    const health = await call(env, 'GET', '/healthz');
    t.equal(health.statusCode, 200);
    t.same(health.json(), { status: 'ok' });
    const ready = await call(env, 'GET', '/readyz');
    t.equal(ready.statusCode, 200);
    t.equal(ready.json().checks.database, 'ok');
    const metrics = await call(env, 'GET', '/metrics');
    t.equal(metrics.statusCode, 200);
    t.match(metrics.headers['content-type'], /text\/plain/);
    t.match(metrics.body, /helpdesk_http_requests_total\{method="GET",route="\/api\/v1\/healthz",status="200"\} 1/);
    const openapi = await call(env, 'GET', '/openapi.json');
    t.equal(openapi.statusCode, 200);
    t.equal(openapi.json().openapi, '3.1.0');
    t.ok(openapi.json().paths['/api/v1/healthz'], 'documents the routes');
  });

  await t.test('X-Request-Id is generated, or echoed when sane', async (t) => {
    const generated = await call(env, 'GET', '/healthz');
    t.match(generated.headers['x-request-id'], /^[0-9a-f-]{36}$/);
    const echoed = await call(env, 'GET', '/healthz', { headers: { 'x-request-id': 'client-req-42' } });
    t.equal(echoed.headers['x-request-id'], 'client-req-42');
    const refused = await call(env, 'GET', '/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
    t.not(refused.headers['x-request-id'], 'bad id with spaces');
  });

  await t.test('unknown route', async (t) => {
    const res = await call(env, 'GET', '/no/such/route');
    t.equal(res.statusCode, 404);
    t.equal(res.json().code, 'route_not_found');
    t.equal(res.json().request_id, res.headers['x-request-id']);
  });

  await t.test('malformed JSON, wrong media type, oversize body', async (t) => {
    const headers = { authorization: `Bearer ${tenant.admin.token}`, 'content-type': 'application/json' };
    const bad = await env.app.inject({ method: 'POST', url: '/api/v1/_probe/echo', headers, payload: '{"subject": ' });
    t.equal(bad.statusCode, 400);
    t.equal(bad.json().code, 'invalid_json');
    const media = await env.app.inject({ method: 'POST', url: '/api/v1/_probe/echo', headers: { ...headers, 'content-type': 'text/plain' }, payload: 'hello' });
    t.equal(media.statusCode, 415);
    t.equal(media.json().code, 'unsupported_media_type');
    const big = await env.app.inject({ method: 'POST', url: '/api/v1/_probe/echo', headers, payload: JSON.stringify({ subject: 'x'.repeat(2 * 1024 * 1024) }) });
    t.equal(big.statusCode, 413);
    t.equal(big.json().code, 'payload_too_large');
  });

  await t.test('validation lists one detail per problem', async (t) => {
    const res = await call(env, 'POST', '/_probe/echo', { token: tenant.admin.token, body: { count: 0, email: 'nope', extra: 1 } });
    t.equal(res.statusCode, 422);
    t.equal(res.json().code, 'validation_failed');
    const details = res.json().details as Array<{ field: string; message: string }>;
    t.same(details.map((d) => d.field).sort(), ['count', 'email', 'extra', 'subject']);
    t.ok(details.find((d) => d.field === 'subject' && d.message === 'is required'));
    t.ok(details.find((d) => d.field === 'extra' && d.message === 'is not allowed'));
  });

  await t.test('authentication precedes validation; a bad token is 401', async (t) => {
    const anonymous = await call(env, 'POST', '/_probe/echo', { body: {} });
    t.equal(anonymous.statusCode, 401);
    t.equal(anonymous.json().code, 'unauthenticated');
    const unknown = await call(env, 'POST', '/_probe/echo', { token: 'hds_not-a-real-token', body: {} });
    t.equal(unknown.statusCode, 401);
  });

  await t.test('internal errors leak neither SQL nor stack', async (t) => {
    const res = await call(env, 'GET', '/_probe/boom');
    t.equal(res.statusCode, 500);
    t.equal(res.json().code, 'internal_error');
    t.notMatch(res.body, /no_such_table_secret_name|select|at .*\.ts/i);
  });

  await t.test('a failed request leaves nothing half-written', async (t) => {
    const res = await call(env, 'POST', '/_probe/rollback', { token: tenant.admin.token });
    t.equal(res.statusCode, 409);
    const row = await env.deps.db('tenants').where({ id: tenant.id }).first('name');
    t.equal(row.name, `Tenant ${tenant.slug}`);
  });
});

t.test('a route whose input has no bound cannot be registered', async (t) => {
  const fake = { routeDefs: [], deps: {}, route: () => undefined } as never;
  const probe = (body: ReturnType<typeof Type.Object>) =>
    route({ method: 'POST', url: '/_probe/unbounded', access: { kind: 'public' }, summary: 'x', tags: ['probe'], schema: { body }, handler: async () => ({}) });
  t.throws(() => registerRoute(fake, probe(Type.Object({ note: Type.String() }))), /body note has no maxLength/);
  t.throws(() => registerRoute(fake, probe(Type.Object({ n: Type.Integer({ minimum: 0 }) }))), /body n has no maximum/);
  t.throws(() => registerRoute(fake, probe(Type.Object({ ids: Type.Array(Type.String({ format: 'uuid' })) }))), /body ids has no maxItems/);
  t.throws(() => registerRoute(fake, probe(Type.Object({ tags: Type.Array(Type.String(), { maxItems: 5 }) }))), /body tags\[\] has no maxLength/);
  registerRoute(fake, probe(Type.Object({ kind: Type.Union([Type.Literal('a'), Type.Literal('b')]), at: Type.String({ format: 'date-time' }), data: Type.Unknown() })));
  t.pass('enums, fixed formats and free JSON values need no bound of their own');
});

t.test('rate limiting per token and per IP', async (t) => {
  const env = await testApp(t, { rateLimitPerMin: 3 });
  const tenant = await tenantFixture(env);
  const responses = [];
  for (let i = 0; i < 4; i++) responses.push(await call(env, 'GET', '/healthz'));
  t.equal(responses[0]!.headers['x-ratelimit-limit'], '3');
  t.same(responses.slice(0, 3).map((r) => r.headers['x-ratelimit-remaining']), ['2', '1', '0']);
  const reset = Number(responses[0]!.headers['x-ratelimit-reset']);
  t.ok(reset > Date.now() / 1000 && reset <= Date.now() / 1000 + 60, 'reset is an epoch second within the minute');
  const limited = responses[3]!;
  t.equal(limited.statusCode, 429);
  t.equal(limited.json().code, 'rate_limited');
  t.ok(Number(limited.headers['retry-after']) >= 1);
  // A signed-in caller has its own budget, separate from the anonymous IP's.
  const withToken = await call(env, 'GET', '/healthz', { token: tenant.admin.token });
  t.equal(withToken.statusCode, 200);
  t.equal(withToken.headers['x-ratelimit-remaining'], '2');
});

t.test('HELPDESK_METRICS_TOKEN guards the metrics endpoint', async (t) => {
  const env = await testApp(t, { metricsToken: 'scrape-secret' });
  t.equal((await call(env, 'GET', '/metrics')).statusCode, 401);
  t.equal((await call(env, 'GET', '/metrics', { headers: { authorization: 'Bearer wrong' } })).statusCode, 401);
  const ok = await call(env, 'GET', '/metrics', { headers: { authorization: 'Bearer scrape-secret' } });
  t.equal(ok.statusCode, 200);
  t.match(ok.body, /helpdesk_http_request_duration_seconds/);
});
