import t from 'tap';
import { call, testApp } from '../../helpers/app.js';

// "Schemas once": the OpenAPI document is generated from the same schemas that validate and
// serialise, so it stays complete only if every route declares them. New routes are held to it.
const NON_JSON = new Set(['GET /metrics', 'GET /openapi.json']);

t.test('the OpenAPI document describes every route completely', async (t) => {
  const env = await testApp(t);
  const doc = (await call(env, 'GET', '/openapi.json')).json();
  t.equal(doc.openapi, '3.1.0');
  t.same(doc.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer' });

  for (const def of env.app.routeDefs) {
    const label = `${def.method} ${def.url}`;
    const status = def.status ?? 200;
    const path = (def.root ? '' : '/api/v1') + def.url.replace(/:(\w+)/g, '{$1}');
    const operation = doc.paths[path]?.[def.method.toLowerCase()];
    t.ok(operation, `${label} is in the document`);
    if (!operation) continue;
    t.ok(def.summary, `${label} has a summary`);
    t.ok(operation.responses?.[String(status)], `${label} documents its ${status} answer`);
    if (status !== 204 && !NON_JSON.has(label)) {
      t.ok(def.schema.response?.[status], `${label} declares the schema of its ${status} body`);
    }
    if (def.access.kind === 'token') t.same(operation.security, [{ bearer: [] }], `${label} requires a bearer token`);
    if (['POST', 'PUT', 'PATCH'].includes(def.method) && def.schema.body) {
      t.ok(operation.requestBody?.content?.['application/json']?.schema, `${label} documents its request body`);
    }
  }
});
