import t from 'tap';
import { testApp, tenantFixture } from '../../helpers/app.js';
import { CLI_ACTOR, SYSTEM_ACTOR } from '../../../src/core/context.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { EVENT_TYPES } from '../../../src/events/types.js';
import { emitTicketCreated } from '../../../src/events/emit/ticket-created.js';
import { emitMessageCreated } from '../../../src/events/emit/ticket-message.js';
import { emitTicketRouted } from '../../../src/events/emit/ticket-routed.js';
import { emitTicketChange, TICKET_CHANGE_TYPES } from '../../../src/events/emit/ticket-change.js';
import { emitSlaEvent, SLA_EVENT_TYPES } from '../../../src/events/emit/sla.js';
import { emitCsatRatingSubmitted } from '../../../src/events/emit/csat.js';
import { emitOrganizationEvent } from '../../../src/events/emit/organization.js';
import { emitExtensionEvent } from '../../../src/events/emit/extension.js';
import { recordCustomerEvent } from '../../../src/directory/customer-events.js';
import type { UserRow } from '../../../src/directory/user-store.js';

/**
 * Every one of the spec's 26 webhook event types has a typed emitter, and each records the payload
 * of the spec's table (SPEC "Outbound webhook events"). The features that emit them call these
 * (their own tests check what they pass).
 */
t.test('each of the 26 event types is emitted with its payload', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const now = new Date('2026-11-23T12:00:00.000Z');
  const ticketId = '0193a000-0000-7000-8000-0000000000aa';
  const ctxIn = { tenantId: tenant.id, actor: { ...CLI_ACTOR, userId: tenant.admin.id, name: 'Ada Admin' }, now };

  await inTransaction(env.deps, ctxIn, async (ctx) => {
    await emitTicketCreated(ctx, {
      ticket_id: ticketId, ticket_number: 7, subject: 'Printer on fire', requester_id: tenant.admin.id, requester_name: 'Rita', requester_email: 'rita@example.com',
      organization_name: 'Acme', team_id: null, team_name: null, assignee_name: null, priority: 'urgent', channel: 'email',
      sla_due_at: '2026-11-23T16:00:00.000Z', body: 'Help', body_html: '<p>Help</p>',
    });
    await emitMessageCreated(ctx, { ticket_id: ticketId, ticket_number: 7, message_id: ticketId, author_id: tenant.admin.id, author_name: 'Ada Admin', is_agent: true, is_private: false, body: 'On it', body_html: '<p>On it</p>' });
    await emitTicketRouted(ctx, { ticket_id: ticketId, ticket_number: 7, trigger_event: 'ticket_created', rule_id: ticketId, rule_name: 'Urgent to L2', team_id: ticketId, team_name: 'L2' });
    for (const type of TICKET_CHANGE_TYPES) await emitTicketChange(ctx, type, { ticketId, from: `${type}:from`, to: `${type}:to` });
    await emitCsatRatingSubmitted(ctx, { ticket_id: ticketId, score: 4, comment: 'Quick', reason: null, submitted_at: '2026-11-23T12:00:00.000Z' }, { id: tenant.admin.id, name: 'Rita' });
    const customer = { id: tenant.admin.id, email: 'rita@example.com', name: 'Rita', phone: null, organization_id: null, is_vip: true, custom_fields: { plan: 'gold' } } as unknown as UserRow;
    await recordCustomerEvent(ctx, 'customer.created', customer);
    await recordCustomerEvent(ctx, 'customer.updated', customer);
    for (const type of ['organization.created', 'organization.updated'] as const) {
      await emitOrganizationEvent(ctx, type, {
        id: ticketId, name: 'Acme', primary_domain: 'acme.test', domains: ['acme.test'], website: 'https://acme.test', notes: null, custom_fields: {}, shares_tickets: false,
      });
    }
    for (const type of ['extension.installed', 'extension.uninstalled', 'extension.enabled', 'extension.disabled'] as const) {
      await emitExtensionEvent(ctx, type, { extension_id: ticketId, name: 'tasks', kind: 'tasklist' });
    }
  });
  await inTransaction(env.deps, { tenantId: tenant.id, actor: SYSTEM_ACTOR, now }, async (ctx) => {
    for (const type of SLA_EVENT_TYPES) await emitSlaEvent(ctx, type, { ticketId, target: 'resolution', due: '2026-11-23T11:00:00.000Z', at: '2026-11-23T11:00:00.000Z' });
  });

  const rows = await env.deps.db('events').where({ tenant_id: tenant.id }).orderBy('seq');
  const byType = new Map(rows.map((r: any) => [r.type, r]));
  t.same([...byType.keys()].sort(), [...EVENT_TYPES].sort(), 'all 26 types, nothing else');
  t.equal(EVENT_TYPES.length, 26);

  t.same(Object.keys(byType.get('ticket.created').data).sort(), [
    'assignee_name', 'body', 'body_html', 'channel', 'organization_name', 'priority', 'requester_email', 'requester_id', 'requester_name',
    'sla_due_at', 'subject', 'team_id', 'team_name', 'ticket_id', 'ticket_number',
  ]);
  t.match(byType.get('ticket.message_created'), { actor_name: 'Ada Admin', data: { ticket_number: 7, message_id: ticketId, is_agent: true, is_private: false, body_html: '<p>On it</p>' } });
  t.same(byType.get('ticket.routed').data, { ticket_id: ticketId, ticket_number: 7, trigger_event: 'ticket_created', rule_id: ticketId, rule_name: 'Urgent to L2', team_id: ticketId, team_name: 'L2' });
  t.equal(byType.get('ticket.routed').to_value, 'L2', 'the team routed to');
  for (const type of TICKET_CHANGE_TYPES) {
    t.same(byType.get(type).data, { ticket_id: ticketId, from: `${type}:from`, to: `${type}:to`, actor_id: tenant.admin.id, actor_name: 'Ada Admin' }, type);
    t.match(byType.get(type), { ticket_id: ticketId, from_value: `${type}:from`, to_value: `${type}:to` }, `${type} on the timeline`);
  }
  for (const type of SLA_EVENT_TYPES) {
    t.same(byType.get(type).data, { ticket_id: ticketId, target: 'resolution', from: '2026-11-23T11:00:00.000Z', to: null, at: '2026-11-23T11:00:00.000Z', actor_id: null, actor_name: null }, type);
    t.match(byType.get(type), { actor_id: null, actor_name: null });
  }
  t.same(byType.get('ticket.csat_rating_submitted').data, { ticket_id: ticketId, score: 4, comment: 'Quick', reason: null, submitted_at: '2026-11-23T12:00:00.000Z' });
  t.match(byType.get('ticket.csat_rating_submitted'), { actor_id: tenant.admin.id, actor_name: 'Rita', to_value: '4' });
  t.same(byType.get('customer.updated').data, { id: tenant.admin.id, email: 'rita@example.com', name: 'Rita', phone: null, organization_id: null, is_vip: true, custom_fields: { plan: 'gold' } });
  t.same(byType.get('organization.created').data, {
    id: ticketId, name: 'Acme', primary_domain: 'acme.test', domains: ['acme.test'], website: 'https://acme.test', notes: null, custom_fields: {}, shares_tickets: false,
  });
  t.same(byType.get('extension.disabled').data, { extension_id: ticketId, name: 'tasks', kind: 'tasklist' });
  t.match(byType.get('extension.installed'), { subject_type: 'extension', subject_id: ticketId });
});
