import t from 'tap';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { openTicket, vocab } from '../../helpers/tickets.js';

/** GET /tickets: filters, conditions, sorts, page and cursor pagination, visibility. */

const ids = (res: { json(): { data: Array<{ id: string }> } }) => res.json().data.map((d) => d.id);

async function walk(env: TestEnv, token: string, query: Record<string, string>): Promise<string[]> {
  const seen: string[] = [];
  let cursor = '';
  for (let guard = 0; guard < 100; guard++) {
    const res = await call(env, 'GET', '/tickets', { token, query: { ...query, cursor, page_size: '3' } });
    if (res.statusCode !== 200) throw new Error(res.body);
    const body = res.json();
    if (body.meta.total !== undefined) throw new Error('a cursor page carries no total');
    seen.push(...body.data.map((d: { id: string }) => d.id));
    if (!body.meta.next_cursor) return seen;
    cursor = body.meta.next_cursor;
  }
  throw new Error('cursor walk did not end');
}

t.test('listing tickets', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const admin = tenant.admin.token;
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const customer2 = await userFixture(env, tenant.id, 'customer');
  const v = await vocab(env, admin);
  const type = (await call(env, 'POST', '/ticket-types', { token: admin, body: { name: 'Billing' } })).json();
  await call(env, 'POST', '/custom-fields', { token: admin, body: { key: 'plan', label: 'Plan', kind: 'select', options: ['free', 'pro'] } });
  await call(env, 'POST', '/custom-fields', { token: admin, body: { key: 'purchased', label: 'Purchased', kind: 'date' } });
  await call(env, 'POST', '/custom-fields', { token: admin, body: { key: 'serial', label: 'Serial', kind: 'text' } });
  const team = (await call(env, 'POST', '/teams', { token: admin, body: { name: 'Hardware' } })).json().id as string;

  const a = await openTicket(env, admin, { subject: 'Invoice wrong', requester_id: customer.id, priority_id: v.priority.urgent, type_id: type.id, tags: ['billing'], plan: 'pro', purchased: '2024-01-10', channel: 'email' });
  const b = await openTicket(env, admin, { subject: 'Printer broken', requester_id: customer2.id, assigned_agent_id: agent.id, team_id: team, tags: ['hardware', 'vip'], plan: 'free', serial: 'SN-42' });
  const c = await openTicket(env, customer.token, { subject: 'Password reset', purchased: '2025-06-01' });
  await call(env, 'PATCH', `/tickets/${c.id}`, { token: admin, body: { status_id: v.status.pending } });
  await openTicket(env, other.admin.token, { subject: 'Invoice of the other tenant', requester: { email: 'x@other.example.com' } });

  const list = (query: Record<string, string>, token = admin) => call(env, 'GET', '/tickets', { token, query });
  const conditions = (value: unknown[]) => ({ conditions: JSON.stringify(value) });

  await t.test('a page carries each ticket whole, as GET /tickets/{id} answers it', async (t) => {
    // Both read only the columns of the representation (src/tickets/output.ts); nothing may go missing.
    for (const query of [{}, { page: '1' }] as Array<Record<string, string>>) {
      const data = (await list(query)).json().data as Array<{ id: string; sla: unknown; custom_fields: unknown }>;
      t.equal(data.length, 3);
      for (const item of data) t.same(item, (await call(env, 'GET', `/tickets/${item.id}`, { token: admin })).json(), `${JSON.stringify(query)}: ${item.id}`);
    }
    const first = (await list({})).json().data.find((d: { id: string }) => d.id === a.id);
    t.match(first, { custom_fields: { plan: 'pro', purchased: '2024-01-10' }, tags: ['billing'], type_id: type.id, channel: 'email' });
  });

  await t.test('filters', async (t) => {
    t.same(ids(await list({})).sort(), [a.id, b.id, c.id].sort(), "only this tenant's tickets");
    t.same(ids(await list({ status_id: v.status.pending })), [c.id]);
    t.same(ids(await list({ priority_id: v.priority.urgent })), [a.id]);
    t.same(ids(await list({ assigned_agent_id: agent.id })), [b.id]);
    t.same(ids(await list({ team_id: team })), [b.id]);
    t.same(ids(await list({ channel: 'email' })), [a.id]);
    t.same(ids(await list({ type_id: type.id })), [a.id]);
    t.same(ids(await list({ requester_id: customer2.id })), [b.id]);
    t.same(ids(await list({ tag: 'VIP' })), [b.id]);
    const bad = await list({ status_id: 'open', channel: 'fax', sort_by: 'subject', page_size: '101' });
    t.equal(bad.statusCode, 422);
    t.same(bad.json().details.map((d: { field: string }) => d.field).sort(), ['channel', 'page_size', 'sort_by', 'status_id']);
  });

  await t.test('the conditions language', async (t) => {
    const cases: Array<[unknown[], string[]]> = [
      [[{ field: 'priority', operator: 'eq', value: 'urgent' }], [a.id]],
      [[{ field: 'priority', operator: 'neq', value: 'urgent' }], [b.id, c.id]],
      [[{ field: 'status', operator: 'in', value: ['pending', v.status.new] }], [a.id, b.id, c.id]],
      [[{ field: 'status', operator: 'eq', value: 'pending' }], [c.id]],
      [[{ field: 'type', operator: 'eq', value: 'billing' }], [a.id]],
      [[{ field: 'type', operator: 'eq', value: null }], [b.id, c.id]],
      [[{ field: 'tag', operator: 'eq', value: 'hardware' }], [b.id]],
      [[{ field: 'tag', operator: 'neq', value: 'hardware' }], [a.id, c.id]],
      [[{ field: 'tag', operator: 'in', value: ['billing', 'vip'] }], [a.id, b.id]],
      [[{ field: 'channel', operator: 'neq', value: 'email' }], [b.id, c.id]],
      [[{ field: 'team_id', operator: 'eq', value: team }], [b.id]],
      [[{ field: 'assigned_agent_id', operator: 'eq', value: null }], [a.id, c.id]],
      [[{ field: 'assigned_agent_id', operator: 'neq', value: agent.id }], [a.id, c.id]],
      [[{ field: 'subject', operator: 'contains', value: 'PRINT' }], [b.id]],
      [[{ field: 'subject', operator: 'contains', value: '%' }], []],
      [[{ field: 'custom_fields.plan', operator: 'eq', value: 'pro' }], [a.id]],
      [[{ field: 'custom_fields.plan', operator: 'in', value: ['pro', 'free'] }], [a.id, b.id]],
      [[{ field: 'custom_fields.plan', operator: 'neq', value: 'pro' }], [b.id, c.id]],
      [[{ field: 'custom_fields.serial', operator: 'contains', value: 'n-4' }], [b.id]],
      [[{ field: 'custom_fields.purchased', operator: 'gt', value: '2024-12-31' }], [c.id]],
      [[{ field: 'custom_fields.purchased', operator: 'lt', value: '2024-12-31' }], [a.id]],
      [[{ field: 'priority', operator: 'neq', value: 'urgent' }, { field: 'tag', operator: 'eq', value: 'vip' }], [b.id]],
    ];
    for (const [query, expected] of cases) {
      const res = await list(conditions(query));
      t.equal(res.statusCode, 200, `${JSON.stringify(query)}: ${res.body.slice(0, 200)}`);
      t.same(ids(res).sort(), [...expected].sort(), JSON.stringify(query));
    }
  });

  await t.test('conditions: every problem named', async (t) => {
    const problems = async (raw: string) => {
      const res = await list({ conditions: raw });
      t.equal(res.statusCode, 422, raw);
      return Object.fromEntries(res.json().details.map((d: { field: string; message: string }) => [d.field, d.message]));
    };
    t.match(await problems('not json'), { conditions: /JSON array/ });
    t.match(await problems('{"field":"priority"}'), { conditions: /array/ });
    t.match(await problems(JSON.stringify(Array(21).fill({ field: 'tag', operator: 'eq', value: 'x' }))), { conditions: /at most 20/ });
    t.match(await problems(JSON.stringify([
      { field: 'colour', operator: 'eq', value: 'red' },
      { field: 'priority', operator: 'contains', value: 'u' },
      { field: 'priority', operator: 'eq', value: 'nope' },
      { field: 'status', operator: 'eq', value: (await vocab(env, other.admin.token)).status.open },
      { field: 'custom_fields.nope', operator: 'eq', value: 1 },
      { field: 'custom_fields.purchased', operator: 'gt', value: 'yesterday' },
      { field: 'team_id', operator: 'in', value: [] },
      'x',
      { field: 'tag', operator: 'eq', value: 'x', extra: 1 },
    ])), {
      'conditions.0.field': /must be one of/, 'conditions.1.operator': /eq, neq, in/, 'conditions.2.value': /not a priority/,
      'conditions.3.value': /not a status/, 'conditions.4.field': 'names no custom field', 'conditions.5.value': /date/,
      'conditions.6.value': /list/, 'conditions.7': /object/, 'conditions.8.extra': /not a condition property/,
    });
  });

  await t.test('customers see only their own tickets', async (t) => {
    t.same(ids(await list({}, customer.token)).sort(), [a.id, c.id].sort());
    t.same(ids(await list({ requester_id: customer2.id }, customer.token)), [], 'a filter cannot widen it');
    t.same(ids(await list(conditions([{ field: 'tag', operator: 'eq', value: 'vip' }]), customer.token)), []);
  });

  await t.test('page form: total and a cursor to continue', async (t) => {
    const first = await list({ page_size: '2', sort_by: 'ticket_number', sort_dir: 'asc' });
    t.match(first.json().meta, { page: 1, page_size: 2, total: 3 });
    t.same(ids(first), [a.id, b.id]);
    const second = await list({ page: '2', page_size: '2', sort_by: 'ticket_number', sort_dir: 'asc' });
    t.same(ids(second), [c.id]);
    t.equal(second.json().meta.next_cursor, null);
    const next = await list({ cursor: first.json().meta.next_cursor, page_size: '2', sort_by: 'ticket_number', sort_dir: 'asc' });
    t.same(ids(next), [c.id]);
    t.equal((await list({ cursor: first.json().meta.next_cursor, page: '2' })).statusCode, 422, 'cursor and page together');
    t.equal((await list({ cursor: first.json().meta.next_cursor, sort_by: 'created_at' })).statusCode, 422, 'a cursor of another sort');
    t.equal((await list({ cursor: 'garbage!' })).statusCode, 422);
  });

  await t.test('cursor pages: every sort, both directions, ties, no duplicates or gaps', async (t) => {
    const fresh = await tenantFixture(env);
    const requester = await userFixture(env, fresh.id, 'customer');
    const made: string[] = [];
    for (let i = 0; i < 11; i++) made.push((await openTicket(env, fresh.admin.token, { requester_id: requester.id, subject: `t${i}` })).id);
    // Ties everywhere: three created_at values, two updated_at values, SLA deadlines equal, missing or distinct.
    const base = Date.parse('2026-01-01T00:00:00.000Z');
    for (const [i, id] of made.entries()) {
      await env.deps.db('tickets').where({ tenant_id: fresh.id, id }).update({
        created_at: new Date(base + (i % 3) * 1000),
        updated_at: new Date(base + (i % 2) * 1000 + 0.5),
        sla_due_at: i % 4 === 0 ? null : new Date(base + (i % 3) * 60_000),
      });
    }
    const rows = await env.deps.db('tickets').where({ tenant_id: fresh.id }).select('id', 'ticket_number', 'created_at', 'updated_at', 'sla_due_at');
    const key = (row: Record<string, unknown>, sort: string) => {
      const v = row[sort];
      if (sort === 'sla_due_at') return v === null ? Infinity : (v as Date).getTime();
      return v instanceof Date ? v.getTime() : Number(v);
    };
    for (const sort of ['created_at', 'updated_at', 'sla_due_at', 'ticket_number']) {
      for (const dir of ['asc', 'desc'] as const) {
        const expected = [...rows].sort((x, y) => {
          const d = key(x, sort) - key(y, sort) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
          return dir === 'asc' ? d : -d;
        }).map((r) => r.id);
        const seen = await walk(env, fresh.admin.token, { sort_by: sort, sort_dir: dir });
        t.same(seen, expected, `${sort} ${dir}: every ticket once, in order`);
      }
    }
  });

  await t.test('a cursor page issues no OFFSET and no count', async (t) => {
    const statements: string[] = [];
    const listener = (q: { sql: string }) => { if (/from "tickets"/i.test(q.sql)) statements.push(q.sql); };
    env.deps.db.on('query', listener);
    await list({ cursor: '', page_size: '2' });
    env.deps.db.removeListener('query', listener);
    t.ok(statements.length >= 1);
    t.notOk(statements.some((s) => /offset|count\(/i.test(s)), statements.join('\n'));
  });

  t.same(env.guard.violations, [], 'every query carried tenant_id');
});
