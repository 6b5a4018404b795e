import { userFixture, type TestEnv } from './app.js';
import { vocab } from './tickets.js';
import { uuidv7 } from '../../src/core/ids.js';

/**
 * The small fixed report data set whose figures test/integration/reports/reports.test.ts computes
 * by hand (see the comment there): tickets T0–T4, their messages, breach events and surveys S1–S4,
 * written straight to the tables with the times the figures need.
 */
const at = (s: string) => new Date(s);
const target = (met: string | null, breached: string | null = null) => ({
  due_at: breached, met_at: met, breached_at: breached, status: breached ? 'breached' : met ? 'met' : 'running',
});
const sla = (fr: object, res: object) => JSON.stringify({ paused: false, first_response: fr, next_response: target(null), resolution: res });

export async function seedReportFixture(env: TestEnv, tenantId: string, token: string) {
  const db = env.deps.db;
  const v = await vocab(env, token);
  const customer = await userFixture(env, tenantId, 'customer');
  const agentA = await userFixture(env, tenantId, 'agent', `anna-${uuidv7().slice(-8)}@example.com`);
  const agentB = await userFixture(env, tenantId, 'agent', `bert-${uuidv7().slice(-8)}@example.com`);
  await db('users').where({ tenant_id: tenantId, id: agentA.id }).update({ name: 'Anna Agent' });
  await db('users').where({ tenant_id: tenantId, id: agentB.id }).update({ name: 'Bert Agent' });
  const teamX = uuidv7();
  await db('teams').insert({ tenant_id: tenantId, id: teamX, name: 'Team X', created_at: at('2026-10-01T00:00:00Z'), updated_at: at('2026-10-01T00:00:00Z') });
  let number = 1000;
  const ticket = async (fields: Record<string, unknown>) => {
    const id = uuidv7();
    await db('tickets').insert({
      tenant_id: tenantId, id, ticket_number: ++number, subject: 'Report fixture', status_id: v.status.open, priority_id: v.priority.normal,
      requester_id: customer.id, channel: 'email', updated_at: fields.created_at, ...fields,
    });
    return id;
  };
  const none = target(null);
  const T0 = await ticket({
    created_at: at('2026-10-21T10:00:00Z'), first_responded_at: at('2026-10-21T11:00:00Z'), resolved_at: at('2026-10-24T10:00:00Z'),
    status_id: v.status.resolved, assigned_agent_id: agentB.id,
    sla: sla(target('2026-10-21T11:00:00.000Z'), target('2026-10-24T10:00:00.000Z', '2026-10-22T10:00:00.000Z')),
  });
  const T1 = await ticket({
    created_at: at('2026-10-23T22:30:00Z'), first_responded_at: at('2026-10-23T23:30:00Z'), resolved_at: at('2026-10-24T02:30:00Z'),
    status_id: v.status.resolved, assigned_agent_id: agentA.id,
    sla: sla(target('2026-10-23T23:30:00.000Z'), target('2026-10-24T02:30:00.000Z')),
  });
  const T2 = await ticket({ created_at: at('2026-10-25T00:30:00Z'), channel: 'api', sla: sla(target(null, '2026-10-25T01:30:00.000Z'), none) });
  const T3 = await ticket({
    created_at: at('2026-10-25T22:30:00Z'), first_responded_at: at('2026-10-25T23:00:00Z'), reopened_count: 1, assigned_agent_id: agentA.id,
    sla: sla(target('2026-10-25T23:00:00.000Z', '2026-10-25T22:45:00.000Z'), none),
  });
  const T4 = await ticket({
    created_at: at('2026-10-26T10:00:00Z'), first_responded_at: at('2026-10-26T10:10:00Z'), resolved_at: at('2026-10-26T12:00:00Z'),
    status_id: v.status.resolved, assigned_agent_id: agentB.id, team_id: teamX,
    sla: sla(target('2026-10-26T10:10:00.000Z'), target('2026-10-26T12:00:00.000Z')),
  });
  const message = (ticket_id: string, author: { id: string } | null, created: string, extra: Record<string, unknown> = {}) => ({
    tenant_id: tenantId, id: uuidv7(), ticket_id, body: 'text', author_id: author?.id ?? customer.id, author_name: 'x',
    is_agent: author !== null, is_private: false, channel: 'email', created_at: at(created), ...extra,
  });
  await db('messages').insert([
    message(T0, null, '2026-10-21T10:00:00Z'), message(T0, agentB, '2026-10-21T11:00:00Z'),
    message(T1, null, '2026-10-23T22:30:00Z'), message(T1, agentA, '2026-10-23T23:30:00Z'), message(T1, agentA, '2026-10-24T01:00:00Z'),
    message(T2, null, '2026-10-25T00:30:00Z'),
    message(T3, null, '2026-10-25T22:30:00Z'), message(T3, agentA, '2026-10-25T23:00:00Z'),
    message(T4, null, '2026-10-26T10:00:00Z'), message(T4, agentB, '2026-10-26T10:10:00Z'),
    message(T4, agentB, '2026-10-26T10:20:00Z', { is_private: true }),
  ]);
  const breach = (ticket_id: string, type: string, instant: string, targetName: string) => ({
    tenant_id: tenantId, id: uuidv7(), type, ticket_id, subject_type: 'ticket', subject_id: ticket_id, from_value: instant,
    data: JSON.stringify({ ticket_id, target: targetName, from: instant, to: null, at: instant, actor_id: null, actor_name: null }),
    created_at: at(instant),
  });
  await db('events').insert([
    breach(T0, 'ticket.sla_breached', '2026-10-22T10:00:00.000Z', 'resolution'),
    breach(T2, 'ticket.first_response_breached', '2026-10-25T01:30:00.000Z', 'first_response'),
    breach(T3, 'ticket.first_response_breached', '2026-10-25T22:45:00.000Z', 'first_response'),
  ]);
  const survey = (ticket_id: string, sent: string, score?: number, submitted?: string) => ({
    tenant_id: tenantId, id: uuidv7(), ticket_id, token_hash: uuidv7(), token_encrypted: 'x', created_at: at(sent),
    expires_at: at('2027-01-01T00:00:00Z'), score: score ?? null, submitted_at: submitted ? at(submitted) : null,
  });
  await db('csat_surveys').insert([
    survey(T1, '2026-10-24T03:00:00Z', 5, '2026-10-24T05:00:00Z'),
    survey(T4, '2026-10-26T12:00:00Z', 2, '2026-10-26T13:00:00Z'),
    survey(T0, '2026-10-24T10:00:00Z'),
    survey(T0, '2026-10-21T12:00:00Z', 4, '2026-10-24T11:00:00Z'),
  ]);
  return { agentA, agentB, customer, teamX, T0, T1, T2, T3, T4, v };
}

