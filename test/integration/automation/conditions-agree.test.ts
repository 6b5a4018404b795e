import t from 'tap';
import fc from 'fast-check';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { CLI_ACTOR } from '../../../src/core/context.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { Ticket } from '../../../src/tickets/models.js';
import { applyConditions, compileConditions, matchesConditions } from '../../../src/tickets/conditions.js';

/**
 * The list and the rules can never disagree about a condition: for generated tickets and generated
 * conditions, the SQL of `applyConditions` selects exactly the tickets `matchesConditions` accepts.
 */

const TEXT = fc.string({ unit: fc.constantFrom('a', 'B', 'c', 'é', 'É', 'ü', ' ', '%', '_', '\\', 'x'), maxLength: 6 });
const TAGS = ['billing', 'vip', 'bug', 'urgent'];
const CHANNELS = ['email', 'api', 'webchat'];
const DATES = ['2024-01-01', '2024-06-30', '2025-02-28', '2023-12-31'];

t.test('SQL and in-memory evaluation agree on generated tickets', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const statuses = (await call(env, 'GET', '/meta/statuses', { token: admin })).json().data as Array<{ id: string; key: string }>;
  const priorities = (await call(env, 'GET', '/meta/priorities', { token: admin })).json().data as Array<{ id: string; key: string }>;
  const type = (await call(env, 'POST', '/ticket-types', { token: admin, body: { name: 'Question' } })).json();
  const team = (await call(env, 'POST', '/teams', { token: admin, body: { name: 'Tier 1' } })).json();
  for (const body of [
    { key: 'serial', label: 'Serial', kind: 'text' },
    { key: 'plan', label: 'Plan', kind: 'select', options: ['free', 'pro'] },
    { key: 'flag', label: 'Flag', kind: 'bool' },
    { key: 'bought', label: 'Bought', kind: 'date' },
  ]) t.equal((await call(env, 'POST', '/custom-fields', { token: admin, body })).statusCode, 201);

  const ticketArb = fc.record({
    status_id: fc.constantFrom(...statuses.map((s) => s.id)),
    priority_id: fc.constantFrom(...priorities.map((p) => p.id)),
    type_id: fc.constantFrom(null, type.id),
    channel: fc.constantFrom(...CHANNELS),
    tags: fc.uniqueArray(fc.constantFrom(...TAGS), { maxLength: 3 }),
    team_id: fc.constantFrom(null, team.id),
    assigned_agent_id: fc.constantFrom(null, agent.id),
    subject: TEXT.map((s) => `S${s}`),
    custom_fields: fc.record({
      serial: TEXT, plan: fc.constantFrom('free', 'pro'), flag: fc.boolean(), bought: fc.constantFrom(...DATES),
    }, { requiredKeys: [] }),
  });
  const rows = fc.sample(ticketArb, { numRuns: 80, seed: 7 });
  const ctxInput = { tenantId: tenant.id, actor: CLI_ACTOR, now: new Date() };
  await inTransaction(env.deps, ctxInput, async (ctx) => {
    for (const [i, row] of rows.entries()) {
      await Ticket.insertIn(ctx, { ...row, ticket_number: i + 1, requester_id: customer.id, created_at: ctx.now, updated_at: ctx.now });
    }
  });

  const one = (field: string, operator: string, value: fc.Arbitrary<unknown>) => fc.record({ field: fc.constant(field), operator: fc.constant(operator), value });
  const ids = (xs: Array<string | null>) => fc.constantFrom(...xs);
  const listOf = (arb: fc.Arbitrary<unknown>) => fc.array(arb, { minLength: 1, maxLength: 3 });
  const conditionArb = fc.oneof(
    ...['eq', 'neq'].map((op) => one('status', op, fc.constantFrom(...statuses.map((s) => s.key)))),
    one('priority', 'in', listOf(fc.constantFrom(...priorities.map((p) => p.key)))),
    ...['eq', 'neq'].map((op) => one('type', op, ids([null, type.id]))),
    one('type', 'in', listOf(ids([null, type.id]))),
    ...['eq', 'neq'].map((op) => one('channel', op, fc.constantFrom(...CHANNELS, 'webform'))),
    ...['eq', 'neq'].map((op) => one('tag', op, fc.constantFrom(...TAGS, 'other'))),
    one('tag', 'in', listOf(fc.constantFrom(...TAGS))),
    ...['eq', 'neq'].map((op) => one('team_id', op, ids([null, team.id, team.id.toUpperCase()]))),
    one('assigned_agent_id', 'in', listOf(ids([null, agent.id]))),
    ...['eq', 'neq', 'contains'].map((op) => one('subject', op, TEXT)),
    ...['eq', 'neq', 'contains'].map((op) => one('custom_fields.serial', op, TEXT)),
    ...['eq', 'neq'].map((op) => one('custom_fields.plan', op, fc.constantFrom('free', 'pro'))),
    one('custom_fields.plan', 'in', listOf(fc.constantFrom('free', 'pro'))),
    ...['eq', 'neq'].map((op) => one('custom_fields.flag', op, fc.boolean())),
    ...['eq', 'neq', 'gt', 'lt'].map((op) => one('custom_fields.bought', op, fc.constantFrom(...DATES))),
  );

  let nonTrivial = 0;
  await inTransaction(env.deps, ctxInput, async (ctx) => {
    const all = await Ticket.scoped(ctx);
    await fc.assert(fc.asyncProperty(fc.array(conditionArb, { minLength: 1, maxLength: 3 }), async (conditions) => {
      const compiled = await compileConditions(ctx, conditions);
      const qb = Ticket.scoped(ctx).select('tickets.id');
      applyConditions(qb, compiled);
      const bySql = (await qb).map((r) => r.id).sort();
      const inMemory = all.filter((ticket) => matchesConditions(ticket, compiled)).map((r) => r.id).sort();
      if (bySql.length > 0 && bySql.length < all.length) nonTrivial += 1;
      if (JSON.stringify(bySql) !== JSON.stringify(inMemory)) {
        throw new Error(`disagree on ${JSON.stringify(conditions)}: sql ${bySql.length}, memory ${inMemory.length}`);
      }
    }), { numRuns: 300, seed: 42 });
  });
  t.ok(nonTrivial > 100, `most generated conditions split the tickets (${nonTrivial} of 300)`);
  t.same(env.guard.violations, []);
});
