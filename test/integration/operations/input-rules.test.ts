import t from 'tap';
import { call, csrfToken, testApp, tenantFixture } from '../../helpers/app.js';
import { grantLicense, licenseKeys } from '../../helpers/license.js';

/**
 * The input rules every route shares (docs/api.md "Input rules"), each reproducing a finding of
 * an independent fuzzer: an unusual method, NUL and control characters, huge page numbers, JSON
 * bodies of the wrong type, and form rules missing from the schemas.
 */
t.test('input rules', async (t) => {
  const keys = licenseKeys();
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem });
  const tenant = await tenantFixture(env);
  await grantLicense(env, tenant.id, keys);
  const token = tenant.apiKey;
  const users = async () => Number((await env.deps.db('users').where({ tenant_id: tenant.id }).count({ n: '*' }).first())!.n);
  const json = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

  await t.test('a method no route answers is 404 route_not_found, never 500', async (t) => {
    for (const [method, headers] of [['QUERY', {}], ['QUERY', { 'content-type': 'application/json' }], ['PROPFIND', {}], ['OPTIONS', {}]] as const) {
      const res = await env.app.inject({ method: method as 'GET', url: '/api/v1/healthz', headers });
      t.equal(res.statusCode, 404, `${method} ${JSON.stringify(headers)}`);
      t.equal(res.json().code, 'route_not_found');
      t.equal(res.json().request_id, res.headers['x-request-id']);
    }
    const body = await env.app.inject({ method: 'DELETE', url: '/api/v1/healthz', headers: { 'content-type': 'text/plain' }, payload: 'x' });
    t.equal(body.statusCode, 404, 'a body on an unknown route is still an unknown route');
    // Refused by the router before any hook: still the contract's body, headers and rate count.
    for (const url of ['/api/v1/users/%E0%A4%A', `/api/v1/users/${'x'.repeat(5000)}`]) {
      const res = await env.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
      t.equal(res.statusCode, 400, `${url.slice(0, 40)}: 400`);
      t.equal(res.json().code, 'bad_request');
      t.equal(res.json().request_id, res.headers['x-request-id']);
      t.ok(res.headers['x-ratelimit-remaining'], 'counted by the rate limit');
    }
  });

  await t.test('NUL and other control characters are refused wherever text enters', async (t) => {
    const before = await users();
    const nulName = await env.app.inject({ method: 'POST', url: '/api/v1/users', headers: json, payload: '{"email":"n@x.test","name":"a\\u0000b"}' });
    t.equal(nulName.statusCode, 422);
    t.same(nulName.json().details, [{ field: 'name', message: 'must not contain control characters (such as NUL)' }]);
    const bell = await call(env, 'POST', '/users', { token, body: { email: 'b@x.test', name: 'ding\u0007' } });
    t.equal(bell.statusCode, 422, 'other C0 control characters too');
    const tabs = await call(env, 'POST', '/users', { token, body: { email: 'tab@x.test', name: 'Tab\tand\nnewline' } });
    t.equal(tabs.statusCode, 201, 'tab, line feed and carriage return are text');

    const deep = await call(env, 'POST', '/users', { token, body: { email: 'c@x.test', name: 'C', custom_fields: { plan: { tier: 'gold\u0000' } } } });
    t.equal(deep.statusCode, 422);
    t.same(deep.json().details, [{ field: 'custom_fields.plan.tier', message: 'must not contain control characters (such as NUL)' }]);
    const key = await call(env, 'POST', '/users', { token, body: { email: 'd@x.test', name: 'D', custom_fields: { 'pl\u0000an': 1 } } });
    t.equal(key.statusCode, 422);
    t.same(key.json().details, [{ field: 'custom_fields.pl\\u0000an', message: 'has a key that must not contain control characters (such as NUL)' }]);
    const surrogate = await env.app.inject({ method: 'POST', url: '/api/v1/users', headers: json, payload: '{"email":"e@x.test","name":"E","custom_fields":{"x":"\\ud800"}}' });
    t.equal(surrogate.statusCode, 422, 'a lone surrogate is no text (jsonb refuses it)');
    t.match(surrogate.json().details, [{ field: 'custom_fields.x', message: /lone surrogate/ }]);
    const nested = `${'['.repeat(100_000)}"x"${']'.repeat(100_000)}`;
    const tooDeep = await env.app.inject({
      method: 'POST', url: '/api/v1/users', headers: json, payload: `{"email":"f@x.test","name":"F","custom_fields":{"nested":${nested}}}`,
    });
    t.equal(tooDeep.statusCode, 422, 'a body nested thousands deep is refused, not a stack overflow');
    t.match(tooDeep.json().details[0].message, /must not nest deeper than 32 levels/);
    t.equal(await users(), before + 1, 'only the valid request wrote');

    const query = await call(env, 'GET', '/users', { token, query: { q: 'a\u0000b' } });
    t.equal(query.statusCode, 422);
    t.same(query.json().details, [{ field: 'q', message: 'must not contain control characters (such as NUL)' }]);
    const path = await call(env, 'GET', '/users/a%00b', { token });
    t.equal(path.statusCode, 404, 'a path id with NUL cannot exist');

    // Headers that reach the database: the tenant's host and the session's user agent.
    const host = await env.app.inject({ method: 'GET', url: '/api/v1/auth/csrf', headers: { host: 'a\u0000b.example.com' } });
    t.equal(host.statusCode, 404);
    t.equal(host.json().code, 'tenant_not_found');
    const csrf = await csrfToken(env, tenant.slug);
    const login = await call(env, 'POST', '/auth/login', {
      tenant: tenant.slug, csrf, headers: { 'user-agent': 'curl\u0000/8' }, body: { email: tenant.admin.email, password: tenant.admin.password },
    });
    t.equal(login.statusCode, 200, 'a NUL in the User-Agent does not fail the sign-in');
    const session = await env.deps.db('sessions').where({ tenant_id: tenant.id }).orderBy('created_at', 'desc').first('user_agent');
    t.equal(session.user_agent, 'curl/8');
  });

  await t.test('page numbers are bounded', async (t) => {
    for (const [path, page] of [['/users', '500000000000000000'], ['/audit-log', '100000000000000000000'], ['/api-keys', '10001']]) {
      const res = await call(env, 'GET', path!, { token, query: { page: page! } });
      t.equal(res.statusCode, 422, `${path}?page=${page}`);
      t.same(res.json().details, [{ field: 'page', message: 'must be at most 10000' }]);
    }
    const last = await call(env, 'GET', '/users', { token, query: { page: '10000' } });
    t.equal(last.statusCode, 200);
    t.same(last.json().data, [], 'the deepest page is an empty page here');
    const doc = (await call(env, 'GET', '/openapi.json')).json();
    const param = doc.paths['/api/v1/users'].get.parameters.find((p: { name: string }) => p.name === 'page');
    t.equal(param.schema.maximum, 10000, 'the maximum is documented');
  });

  await t.test('bodies are not coerced; query strings are', async (t) => {
    const quota = await call(env, 'PUT', '/users/instance-seat-quota', { token, body: { quota: false } });
    t.equal(quota.statusCode, 422);
    t.same(quota.json().details, [{ field: 'quota', message: 'must be an integer or null' }]);
    t.same((await call(env, 'GET', '/users/instance-seat-quota', { token })).json(), { quota: null }, 'unchanged');
    const quoted = await call(env, 'PUT', '/users/instance-seat-quota', { token, body: { quota: '5' } });
    t.equal(quoted.statusCode, 422, 'a number in a string is not a number');
    const name = await call(env, 'POST', '/users', { token, body: { email: 'g@x.test', name: false } });
    t.same(name.json().details, [{ field: 'name', message: 'must be a string' }]);
    const vip = await call(env, 'POST', '/users', { token, body: { email: 'h@x.test', name: 'H', is_vip: 'true' } });
    t.same(vip.json().details, [{ field: 'is_vip', message: 'must be a boolean' }]);
    const list = await call(env, 'GET', '/users', { token, query: { page: '1', page_size: '5', active: 'true' } });
    t.equal(list.statusCode, 200, 'query text is still read as numbers and booleans');
    t.equal(list.json().meta.page_size, 5);
  });

  await t.test('the password rule is in the schemas that enforce it', async (t) => {
    const doc = (await call(env, 'GET', '/openapi.json')).json();
    const schemas = doc.components.schemas;
    for (const [name, field] of [['RegisterBody', 'password'], ['ResetPasswordBody', 'new_password'], ['PasswordChangeBody', 'new_password'], ['UserCreate', 'password']]) {
      t.match(schemas[name!].properties[field!], { minLength: 12, maxLength: 256 }, `${name}.${field}`);
    }
    t.match(schemas.RegisterBody.properties.name, { pattern: '\\S' }, 'a name must not be blank');
    const csrf = await csrfToken(env, tenant.slug);
    const emoji = await call(env, 'POST', '/auth/register', {
      tenant: tenant.slug, csrf, body: { email: 'emoji@x.test', name: 'Emoji', password: '🔑'.repeat(12) },
    });
    t.equal(emoji.statusCode, 201, 'twelve characters are twelve characters, whatever their UTF-16 length');
  });
});
