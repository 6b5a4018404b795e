import t from 'tap';
import { Type } from '@sinclair/typebox';
import { testApp } from '../../helpers/app.js';
import { licenseKeys } from '../../helpers/license.js';
import { fuzzRoutes } from '../../helpers/fuzz/fuzzer.js';
import { route, type RouteDef } from '../../../daemon/route.js';
import { errors } from '../../../src/core/errors.js';
import { NonBlank } from '../../../src/core/schema-types.js';

/**
 * Our own API fuzzer over EVERY registered route (test/helpers/fuzz/): requests generated from
 * each route's TypeBox schemas — valid ones, and wrong JSON types, missing and extra fields, huge
 * numbers, control characters, 100k-character strings, lone surrogates, malformed JSON, wrong
 * content types, broken path ids, unusual methods — sent as an admin, a customer and anonymously.
 * Every answer must be below 500, have the contract's error body with a status and code the
 * OpenAPI document lists for the operation, not refuse a valid request for its form (except the
 * service rules listed in fuzzer.ts, with their reasons), and leave nothing written when refused.
 * Routes added later are fuzzed without being named here.
 *
 * Seeded and bounded (about a minute): HELPDESK_FUZZ_RUNS sets the requests per route (default
 * 50), HELPDESK_FUZZ_SEED the seed (fixed by default; random when only HELPDESK_FUZZ_RUNS is set,
 * for a longer exploring run). A failure prints the seed that replays it.
 */
const RUNS = Number(process.env.HELPDESK_FUZZ_RUNS ?? 50);
const SEED = process.env.HELPDESK_FUZZ_SEED !== undefined
  ? Number(process.env.HELPDESK_FUZZ_SEED)
  : process.env.HELPDESK_FUZZ_RUNS !== undefined ? Date.now() % 2 ** 31 : 20_261_122;
/** HELPDESK_FUZZ_ROUTES='<regex>' fuzzes only the routes whose `METHOD /url` matches (while working on an area). */
const ONLY = process.env.HELPDESK_FUZZ_ROUTES ? new RegExp(process.env.HELPDESK_FUZZ_ROUTES) : null;

t.test('no generated request gets a 5xx or an undocumented answer from any route', async (t) => {
  const keys = licenseKeys();
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem });
  t.comment(`fuzzing with HELPDESK_FUZZ_SEED=${SEED} HELPDESK_FUZZ_RUNS=${RUNS}`);
  const defs = ONLY ? env.app.routeDefs.filter((d) => ONLY.test(`${d.method} ${d.url}`)) : env.app.routeDefs;
  if (ONLY) t.comment(`only the ${defs.length} routes matching HELPDESK_FUZZ_ROUTES=${ONLY.source}`);
  const { failures, sent } = await fuzzRoutes(env, keys, defs, { runs: RUNS, seed: SEED });
  for (const failure of failures) t.fail(`${failure.route}: ${failure.message}\nreplay: HELPDESK_FUZZ_SEED=${SEED} HELPDESK_FUZZ_RUNS=${RUNS}`);
  t.equal(failures.length, 0, `${sent} requests over ${defs.length} routes`);
});

// Routes that break the rules on purpose: the fuzzer must catch each of them.
const handler = async () => ({ ok: true });
const broken = [
  route({
    method: 'POST', url: '/_fuzz/conflict', access: { kind: 'token', scope: 'users:write' }, summary: 'undeclared 409', tags: ['probe'],
    schema: { body: Type.Object({ name: NonBlank({ maxLength: 50 }) }, { additionalProperties: false }) },
    handler: async () => { throw errors.conflict('taken'); },
  }),
  route({
    method: 'GET', url: '/_fuzz/crash', access: { kind: 'public' }, summary: 'crashes', tags: ['probe'], schema: {},
    handler: async () => { throw new Error('boom'); },
  }),
  route({
    method: 'POST', url: '/_fuzz/picky', access: { kind: 'public' }, summary: 'refuses valid input', tags: ['probe'],
    schema: { body: Type.Object({ note: Type.String({ maxLength: 50 }) }, { additionalProperties: false }) },
    handler: async () => { throw errors.invalid('note', 'is not to my taste'); },
  }),
  route({
    method: 'POST', url: '/_fuzz/half-written', access: { kind: 'token', scope: 'admin' }, summary: 'writes, then refuses', tags: ['probe'],
    transaction: false, errors: ['conflict'], schema: {},
    handler: async (ctx) => {
      await ctx.trx('tenants').where({ id: ctx.tenantId }).update({ name: `renamed ${Math.random()}` });
      throw errors.conflict('changed my mind');
    },
  }),
  route({ method: 'GET', url: '/_fuzz/fine', access: { kind: 'public' }, summary: 'fine', tags: ['probe'], schema: {}, handler }),
] as RouteDef[];

t.test('the fuzzer catches an undocumented status, a crash, a refused valid request and a half-written refusal', async (t) => {
  const keys = licenseKeys();
  const env = await testApp(t, { licensePublicKey: keys.publicKeyPem }, { extraRoutes: broken });
  const { failures } = await fuzzRoutes(env, keys, broken, { runs: 20, seed: 7 });
  const found = Object.fromEntries(failures.map((f) => [f.route, f.message]));
  t.match(found['POST /_fuzz/conflict'], /undocumented answer 409 conflict/);
  t.match(found['GET /_fuzz/crash'], /server error/);
  t.match(found['POST /_fuzz/picky'], /a valid request was refused for its form/);
  t.match(found['POST /_fuzz/half-written'], /a refused request changed tenants/);
  t.notOk(found['GET /_fuzz/fine'], 'a route that keeps the rules passes');
});
