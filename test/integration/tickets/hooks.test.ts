import t from 'tap';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { registerTicketHook, type TicketChange } from '../../../src/tickets/hooks.js';
import { Ticket } from '../../../src/tickets/models.js';
import { openTicket, vocab } from '../../helpers/tickets.js';

/**
 * Ticket hooks (where the SLA engine and routing attach): called in the change's transaction on
 * create and on every change, with what changed; what they write is in the answer and in the
 * `ticket.created` payload; a failing hook rolls the whole change back.
 */
t.test('ticket hooks', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const customer = await userFixture(env, tenant.id, 'customer');
  const v = await vocab(env, tenant.admin.token);
  const seen: TicketChange[] = [];
  let fail = false;
  const due = new Date('2030-01-01T00:00:00.000Z');
  registerTicketHook('test-sla', async (ctx, change) => {
    seen.push(change);
    if (fail) throw new Error('hook failed');
    if (change.before) return false;
    await Ticket.scoped(ctx).where('tickets.id', change.after.id).patch({ sla_due_at: due } as never);
    return true; // it wrote the row: the caller reads it again
  });
  t.teardown(() => registerTicketHook('test-sla', async () => false));

  const ticket = await openTicket(env, tenant.admin.token, { requester_id: customer.id });
  t.equal(seen[0]!.before, null);
  t.ok(seen[0]!.changed.has('status_id'));
  t.equal(ticket.sla_due_at, due.toISOString(), 'the answer shows what the hook wrote');
  const created = await env.deps.db('events').where({ tenant_id: tenant.id, ticket_id: ticket.id, type: 'ticket.created' }).first();
  t.equal(created.data.sla_due_at, due.toISOString(), 'so does the ticket.created payload');

  const patched = await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: tenant.admin.token, body: { priority_id: v.priority.high } });
  t.same([...seen[1]!.changed], ['priority_id']);
  t.equal(seen[1]!.before!.priority_id, v.priority.normal);
  t.equal(seen[1]!.after.priority_id, v.priority.high);
  const read = await call(env, 'GET', `/tickets/${ticket.id}`, { token: tenant.admin.token });
  t.same(patched.json(), read.json(), 'the answer of a change (the SLA hook rewrote the row, this one did not) is the stored ticket');
  const renamed = await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: tenant.admin.token, body: { subject: 'Renamed' } });
  t.same([...seen[2]!.changed], ['subject']);
  t.same(renamed.json(), (await call(env, 'GET', `/tickets/${ticket.id}`, { token: tenant.admin.token })).json(),
    'a change no hook rewrote answers the row of its own UPDATE, as stored');

  fail = true;
  const res = await call(env, 'PATCH', `/tickets/${ticket.id}`, { token: tenant.admin.token, body: { priority_id: v.priority.low } });
  t.equal(res.statusCode, 500);
  const row = await env.deps.db('tickets').where({ tenant_id: tenant.id, id: ticket.id }).first();
  t.equal(row.priority_id, v.priority.high, 'rolled back');
  t.equal((await env.deps.db('events').where({ tenant_id: tenant.id, ticket_id: ticket.id, type: 'ticket.priority_changed' })).length, 1, 'no event of the failed change');
});
