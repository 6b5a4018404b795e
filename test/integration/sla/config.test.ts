import t from 'tap';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { uuidv7 } from '../../../src/core/ids.js';

const auditRows = (env: TestEnv, tenantId: string, action: string) =>
  env.deps.db('audit_log').where({ tenant_id: tenantId, action }).orderBy('created_at');
const priorityId = async (env: TestEnv, tenantId: string, key: string) =>
  (await env.deps.db('priorities').where({ tenant_id: tenantId, key }).first('id')).id as string;
async function ticketType(env: TestEnv, tenantId: string, name = `Type ${uuidv7()}`): Promise<string> {
  const id = uuidv7();
  await env.deps.db('ticket_types').insert({ tenant_id: tenantId, id, name, created_at: new Date(), updated_at: new Date() });
  return id;
}

t.test('SLA configuration', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const admin = tenant.admin.token;

  await t.test('business hours: the default, both body shapes, 24:00, validation with dotted fields', async (t) => {
    const initial = await call(env, 'GET', '/business-hours', { token: agent.token });
    t.equal(initial.statusCode, 200);
    t.same(initial.json(), {
      timezone: 'UTC', updated_at: null,
      schedule: {
        monday: { open: '09:00', close: '17:00' }, tuesday: { open: '09:00', close: '17:00' }, wednesday: { open: '09:00', close: '17:00' },
        thursday: { open: '09:00', close: '17:00' }, friday: { open: '09:00', close: '17:00' }, saturday: { is_closed: true }, sunday: { is_closed: true },
      },
    });
    const nested = await call(env, 'PUT', '/business-hours', { token: admin, body: {
      timezone: 'Europe/Berlin', schedule: { monday: { open: '08:00', close: '24:00' }, tuesday: { open: '08:00', close: '12:00' }, sunday: { is_closed: true } },
    } });
    t.equal(nested.statusCode, 200);
    t.match(nested.json(), { timezone: 'Europe/Berlin', schedule: { monday: { open: '08:00', close: '24:00' }, wednesday: { is_closed: true } } });
    const flat = await call(env, 'PUT', '/business-hours', { token: admin, body: { timezone: 'America/New_York', friday: { open: '10:00', close: '16:00' } } });
    t.equal(flat.statusCode, 200);
    const read = (await call(env, 'GET', '/business-hours', { token: admin })).json();
    t.match(read, { timezone: 'America/New_York', schedule: { friday: { open: '10:00', close: '16:00' }, monday: { is_closed: true } } });
    t.match(read.updated_at, /Z$/);
    const [audit] = await auditRows(env, tenant.id, 'business_hours.updated');
    t.match(audit, { actor_id: tenant.admin.id, changes: { timezone: { from: 'UTC', to: 'Europe/Berlin' } } });

    const form = await call(env, 'PUT', '/business-hours', { token: admin, body: { timezone: 'UTC', schedule: { tuesday: { open: '25:00', close: '9:00' } } } });
    t.equal(form.statusCode, 422);
    t.same(form.json().details.map((d: { field: string }) => d.field).sort(), ['schedule.tuesday.close', 'schedule.tuesday.open']);
    const bad = await call(env, 'PUT', '/business-hours', { token: admin, body: {
      timezone: 'Mars/Olympus', schedule: { monday: { open: '18:00', close: '09:00' }, wednesday: { open: '09:00' }, thursday: { is_closed: true, open: '09:00' } },
    } });
    t.equal(bad.statusCode, 422);
    t.same(bad.json().details.map((d: { field: string }) => d.field).sort(), ['schedule.monday.close', 'schedule.thursday', 'schedule.wednesday.close', 'timezone']);
    const mixed = await call(env, 'PUT', '/business-hours', { token: admin, body: { timezone: 'UTC', schedule: {}, monday: { open: '09:00', close: '10:00' } } });
    t.equal(mixed.statusCode, 422);
    t.equal(mixed.json().details[0].field, 'schedule');
    const unknownDay = await call(env, 'PUT', '/business-hours', { token: admin, body: { timezone: 'UTC', funday: { open: '09:00', close: '10:00' } } });
    t.equal(unknownDay.statusCode, 422);
    t.equal((await call(env, 'GET', '/business-hours', { token: admin })).json().timezone, 'America/New_York', 'nothing half-written');
    t.equal((await call(env, 'PUT', '/business-hours', { token: agent.token, body: { timezone: 'UTC' } })).statusCode, 403, 'agents read, admins write');
    t.equal((await call(env, 'GET', '/business-hours', { token: other.admin.token })).json().timezone, 'UTC', 'another tenant keeps its own');
  });

  await t.test('holidays: create, list, update, delete, duplicates, bad dates, other tenants', async (t) => {
    const created = await call(env, 'POST', '/business-hours/holidays', { token: admin, body: { name: ' Christmas ', date: '2026-12-25', recurring: true } });
    t.equal(created.statusCode, 201);
    const xmas = created.json();
    t.match(xmas, { name: 'Christmas', date: '2026-12-25', recurring: true });
    const boxing = (await call(env, 'POST', '/business-hours/holidays', { token: admin, body: { name: 'Boxing Day', date: '2026-12-26' } })).json();
    t.equal(boxing.recurring, false);
    const dup = await call(env, 'POST', '/business-hours/holidays', { token: admin, body: { name: 'Again', date: '2026-12-25' } });
    t.equal(dup.statusCode, 409);
    t.equal(dup.json().code, 'already_exists');
    for (const date of ['2026-02-30', '2026-13-01', '26-12-01', '2026-12-1']) {
      const res = await call(env, 'POST', '/business-hours/holidays', { token: admin, body: { name: 'Bad', date } });
      t.equal(res.statusCode, 422, date);
      t.equal(res.json().details[0].field, 'date');
    }
    t.equal((await call(env, 'POST', '/business-hours/holidays', { token: admin, body: { name: '   ', date: '2026-01-01' } })).statusCode, 422);
    t.equal((await call(env, 'POST', '/business-hours/holidays', { token: admin, body: { name: 'x'.repeat(201), date: '2026-01-01' } })).statusCode, 422);
    const list = (await call(env, 'GET', '/business-hours/holidays', { token: agent.token })).json();
    t.same(list.data.map((h: { date: string }) => h.date), ['2026-12-25', '2026-12-26']);
    t.same(list.meta, { page: 1, page_size: 20, total: 2 });
    const moved = await call(env, 'PATCH', `/business-hours/holidays/${boxing.id}`, { token: admin, body: { date: '2026-12-28', recurring: true } });
    t.match(moved.json(), { date: '2026-12-28', recurring: true, name: 'Boxing Day' });
    t.equal((await call(env, 'PATCH', `/business-hours/holidays/${boxing.id}`, { token: admin, body: { date: '2026-12-25' } })).statusCode, 409);
    t.equal((await call(env, 'PATCH', `/business-hours/holidays/${boxing.id}`, { token: other.admin.token, body: { name: 'Mine' } })).statusCode, 404, 'another tenant\'s id is 404');
    t.equal((await call(env, 'DELETE', `/business-hours/holidays/${boxing.id}`, { token: other.admin.token })).statusCode, 404);
    t.equal((await call(env, 'DELETE', `/business-hours/holidays/${boxing.id}`, { token: agent.token })).statusCode, 403);
    t.equal((await call(env, 'DELETE', `/business-hours/holidays/${boxing.id}`, { token: admin })).statusCode, 204);
    t.equal((await call(env, 'DELETE', `/business-hours/holidays/${boxing.id}`, { token: admin })).statusCode, 404);
    t.equal((await call(env, 'DELETE', '/business-hours/holidays/not-a-uuid', { token: admin })).statusCode, 404);
    t.equal((await auditRows(env, tenant.id, 'holiday.created')).length, 2);
    t.match((await auditRows(env, tenant.id, 'holiday.updated'))[0], { changes: { date: { from: '2026-12-26', to: '2026-12-28' } } });
    t.equal((await auditRows(env, tenant.id, 'holiday.deleted')).length, 1);
    t.equal((await call(env, 'GET', '/business-hours/holidays', { token: other.admin.token })).json().meta.total, 0);
  });

  await t.test('policies: the default matrix on every tenant, upsert per priority', async (t) => {
    const list = await call(env, 'GET', '/sla-policies', { token: agent.token });
    t.equal(list.statusCode, 200);
    t.same(list.json().data.map((p: Record<string, unknown>) => [p.priority_key, p.first_response_time_minutes, p.next_response_time_minutes, p.resolution_time_minutes, p.respect_business_hours, p.warn_percent, p.is_default]), [
      ['urgent', 15, 30, 240, false, 80, true], ['high', 60, 120, 480, true, 80, true],
      ['normal', 240, 480, 1440, true, 80, true], ['low', 480, 1440, 2880, true, 80, true],
    ]);
    const high = await priorityId(env, tenant.id, 'high');
    const res = await call(env, 'PATCH', `/sla-policies/${high}`, { token: admin, body: { first_response_time_minutes: 30, respect_business_hours: false } });
    t.equal(res.statusCode, 200);
    t.match(res.json(), { priority_key: 'high', first_response_time_minutes: 30, next_response_time_minutes: 120, respect_business_hours: false, is_default: false });
    const again = await call(env, 'PATCH', `/sla-policies/${high}`, { token: admin, body: { warn_percent: 50 } });
    t.match(again.json(), { first_response_time_minutes: 30, warn_percent: 50 });
    t.match((await auditRows(env, tenant.id, 'sla_policy.updated'))[0], { resource_id: high, changes: { first_response_time_minutes: { from: 60, to: 30 } } });
    for (const body of [{ first_response_time_minutes: 0 }, { warn_percent: 101 }, { resolution_time_minutes: 1.5 }, { respect_business_hours: 'yes' }, { bogus: 1 }]) {
      t.equal((await call(env, 'PATCH', `/sla-policies/${high}`, { token: admin, body })).statusCode, 422, JSON.stringify(body));
    }
    t.equal((await call(env, 'PATCH', `/sla-policies/${high}`, { token: agent.token, body: { warn_percent: 60 } })).statusCode, 403);
    t.equal((await call(env, 'PATCH', `/sla-policies/${high}`, { token: other.admin.token, body: { warn_percent: 60 } })).statusCode, 404);
    t.equal((await call(env, 'PATCH', `/sla-policies/${uuidv7()}`, { token: admin, body: { warn_percent: 60 } })).statusCode, 404);
    t.match((await call(env, 'GET', '/sla-policies', { token: other.admin.token })).json().data[1], { priority_key: 'high', first_response_time_minutes: 60, is_default: true });
  });

  await t.test('ticket-type overrides: upsert, clear a field, delete, other tenants', async (t) => {
    const type = await ticketType(env, tenant.id);
    const otherType = await ticketType(env, other.id);
    const normal = await priorityId(env, tenant.id, 'normal');
    const url = `/ticket-types/${type}/sla-policies/${normal}`;
    const res = await call(env, 'PATCH', url, { token: admin, body: { resolve_hours: 4, warn_percent: 75 } });
    t.equal(res.statusCode, 200);
    t.match(res.json(), { type_id: type, priority_id: normal, resolve_hours: 4, first_response_minutes: null, warn_percent: 75 });
    const cleared = await call(env, 'PATCH', url, { token: admin, body: { warn_percent: null, first_response_minutes: 20 } });
    t.match(cleared.json(), { resolve_hours: 4, first_response_minutes: 20, warn_percent: null });
    t.equal((await call(env, 'PATCH', url, { token: agent.token, body: { resolve_hours: 1 } })).statusCode, 403, 'admin only');
    t.equal((await call(env, 'PATCH', url, { token: admin, body: { resolve_hours: 0 } })).statusCode, 422);
    t.equal((await call(env, 'PATCH', `/ticket-types/${otherType}/sla-policies/${normal}`, { token: admin, body: { resolve_hours: 1 } })).statusCode, 404);
    t.equal((await call(env, 'PATCH', url, { token: other.admin.token, body: { resolve_hours: 1 } })).statusCode, 404);
    t.equal((await env.deps.db('sla_type_overrides').where({ tenant_id: other.id })).length, 0, 'nothing written for the other tenant');
    t.equal((await call(env, 'DELETE', url, { token: admin })).statusCode, 204);
    t.equal((await call(env, 'DELETE', url, { token: admin })).statusCode, 404, 'no override left');
    t.equal((await auditRows(env, tenant.id, 'sla_override.updated')).length, 2);
    t.equal((await auditRows(env, tenant.id, 'sla_override.deleted')).length, 1);
  });
});
