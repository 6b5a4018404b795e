import t from 'tap';
import { Type } from '@sinclair/typebox';
import { call, testApp } from '../../helpers/app.js';
import { registerRoute, route, type RouteDef } from '../../../daemon/route.js';
import { errorCodesOf } from '../../../daemon/openapi/error-responses.js';
import { documentPath } from '../../../daemon/openapi/document.js';
import { operationIdOf } from '../../../daemon/openapi/operation-id.js';
import { ERROR_TABLE } from '../../../src/core/errors.js';

// "Schemas once": the OpenAPI document is generated from the same schemas that validate and
// serialise, and completed from the route declarations, so it stays complete only if every route
// declares them. New routes are held to it.
// The extension hook answers whatever its plugin chooses (text, JSON, bytes, a bare status).
const NON_JSON = new Set(['GET /metrics', 'GET /openapi.json', 'POST /integrations/extensions/hook/:token', 'GET /integrations/extensions/hook/:token']);

t.test('the OpenAPI document describes every route completely', async (t) => {
  const env = await testApp(t);
  const doc = (await call(env, 'GET', '/openapi.json')).json();
  t.equal(doc.openapi, '3.1.0');
  t.same(doc.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer', description: doc.components.securitySchemes.bearer.description });
  t.equal(doc.info.license.identifier, 'AGPL-3.0-only');
  t.ok(doc.info.contact.url, 'a contact');
  t.same(doc.servers.map((s: { url: string }) => s.url), [env.config.siteUrl], 'the server is the site URL');
  t.same(doc.components.schemas.Error.properties.code.enum, Object.keys(ERROR_TABLE), 'the Error schema lists every code');

  const ids = new Set<string>();
  for (const def of env.app.routeDefs) {
    const label = `${def.method} ${def.url}`;
    const status = def.status ?? 200;
    const operation = doc.paths[documentPath(def)]?.[def.method.toLowerCase()];
    t.ok(operation, `${label} is in the document`);
    if (!operation) continue;
    t.ok(def.summary, `${label} has a summary`);
    t.equal(operation.operationId, operationIdOf(def), `${label} has its operationId`);
    t.notOk(ids.has(operation.operationId), `${label}: operationId ${operation.operationId} is unique`);
    ids.add(operation.operationId);
    t.ok(operation.responses?.[String(status)], `${label} documents its ${status} answer`);
    if (def.stream) {
      const media = operation.responses['200']?.content?.['text/event-stream'];
      t.ok(media?.['x-event-data']?.properties, `${label} documents its stream and the data of its events`);
      t.ok(operation.parameters?.find((p: { name: string; in: string }) => p.name === 'Last-Event-ID' && p.in === 'header'), `${label} documents Last-Event-ID`);
    } else if (def.binary) {
      // A download documents its file as binary content instead of a JSON schema.
      t.equal(operation.responses[String(status)].content?.['application/octet-stream']?.schema?.format, 'binary', `${label} documents a binary answer`);
      if (def.binary.ranges) t.ok(operation.responses['206']?.headers?.['Content-Range'], `${label} documents its 206 answer`);
    } else if (status !== 204 && !NON_JSON.has(label) && !def.page) {
      t.ok(def.schema.response?.[status], `${label} declares the schema of its ${status} body`);
    }
    if (def.multipart) {
      const form = operation.requestBody?.content?.['multipart/form-data']?.schema;
      t.same(form?.required, def.multipart.parts ? def.multipart.parts.map((p) => p.name) : [def.multipart.field], `${label} documents its upload form`);
      if (def.multipart.parts) t.ok(operation.requestBody?.content?.['application/json']?.schema, `${label} documents its JSON form too`);
    }
    if (def.access.kind === 'token') {
      t.same(operation.security, [{ bearer: [] }], `${label} requires a bearer token`);
      if (def.access.scope) t.equal(operation['x-required-scope'], def.access.scope, `${label} names its scope`);
      if (def.access.scope) t.match(operation.description, def.access.scope, `${label} says its scope in words`);
    } else {
      t.same(operation.security, [], `${label} says it needs no credentials`);
    }
    if (def.feature) t.equal(operation['x-feature'], def.feature);
    if (['POST', 'PUT', 'PATCH'].includes(def.method) && def.schema.body) {
      t.ok(operation.requestBody?.content?.['application/json']?.schema, `${label} documents its request body`);
    }
    if (def.access.kind === 'csrf') {
      t.ok(operation.parameters?.find((p: { name: string; in: string }) => p.name === 'X-CSRF-Token' && p.in === 'header'), `${label} documents X-CSRF-Token`);
    }

    for (const [code, response] of Object.entries(operation.responses as Record<string, any>)) {
      t.ok(response.headers?.['X-Request-Id'], `${label} ${code} documents X-Request-Id`);
      t.ok(response.headers?.['X-RateLimit-Remaining'], `${label} ${code} documents X-RateLimit-Remaining`);
    }
    for (const code of errorCodesOf(def)) {
      const response = operation.responses[String(ERROR_TABLE[code])];
      t.ok(response?.['x-error-codes']?.includes(code), `${label} documents ${code}`);
    }
    t.same(operation.responses['422']?.content['application/json'].schema ?? null,
      operation.responses['422'] ? { $ref: '#/components/schemas/ValidationError' } : null, `${label}: a 422 has the problem list`);
    t.same(operation.responses['429'].headers['Retry-After'], { $ref: '#/components/headers/Retry-After' }, `${label}: 429 documents Retry-After`);
    t.same(operation.responses['500'].content['application/json'].schema, { $ref: '#/components/schemas/Error' });
  }
});

t.test('the answers derive from the declaration', async (t) => {
  const env = await testApp(t);
  const doc = (await call(env, 'GET', '/openapi.json')).json();
  const users = doc.paths['/api/v1/users/{id}'].patch;
  t.same(users.responses['404']['x-error-codes'], ['resource_not_found'], 'an id in the path can be unknown');
  t.same(users.responses['409']['x-error-codes'], ['already_exists', 'conflict'], 'declared by the route');
  t.same(users.responses['403']['x-error-codes'], ['insufficient_scope'], 'a scope can be missing');
  t.same(users.responses['400']['x-error-codes'], ['bad_request', 'invalid_json']);
  const login = doc.paths['/api/v1/auth/login'].post;
  t.same(login.responses['401']['x-error-codes'], ['invalid_credentials']);
  t.same(login.responses['403']['x-error-codes'], ['csrf_invalid']);
  t.same(login.responses['404']['x-error-codes'], ['tenant_not_found']);
  const health = doc.paths['/api/v1/healthz'].get;
  t.same(Object.keys(health.responses), ['200', '400', '429', '500'], 'a public GET without input answers little');
  t.equal(doc.components.schemas.User.type, 'object', 'named schemas are components');
  t.same(doc.paths['/api/v1/users'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/UserList' });
});

const handler = async () => ({});

t.test('registration refuses a duplicate operationId and two schemas under one name', async (t) => {
  const fake = () => ({ routeDefs: [] as RouteDef[], deps: {}, route: () => undefined }) as never;
  const app = fake();
  registerRoute(app, route({ method: 'GET', url: '/things', access: { kind: 'public' }, summary: 'x', tags: ['x'], schema: {}, handler }));
  t.throws(
    () => registerRoute(app, route({ method: 'GET', url: '/things/', access: { kind: 'public' }, summary: 'y', tags: ['x'], schema: {}, handler })),
    /operationId things\.get is already used by GET \/things; declare an operationId/,
  );
  registerRoute(app, route({ method: 'GET', url: '/things/', operationId: 'things.again', access: { kind: 'public' }, summary: 'y', tags: ['x'], schema: {}, handler }));
  t.throws(
    () => registerRoute(app, route({ method: 'GET', url: '/x', operationId: 'things list', access: { kind: 'public' }, summary: 'y', tags: ['x'], schema: {}, handler })),
    /not URL-safe/,
  );

  const other = fake();
  const one = Type.Object({ a: Type.String() }, { $id: 'Thing' });
  const two = Type.Object({ b: Type.String() }, { $id: 'Thing' });
  registerRoute(other, route({ method: 'GET', url: '/one', access: { kind: 'public' }, summary: 'x', tags: ['x'], schema: { response: { 200: one } }, handler }));
  registerRoute(other, route({ method: 'GET', url: '/same', access: { kind: 'public' }, summary: 'x', tags: ['x'], schema: { response: { 200: Type.Array(one) } }, handler }));
  t.throws(
    () => registerRoute(other, route({ method: 'GET', url: '/two', access: { kind: 'public' }, summary: 'x', tags: ['x'], schema: { response: { 200: two } }, handler })),
    /a different schema is already named Thing/,
  );
});
