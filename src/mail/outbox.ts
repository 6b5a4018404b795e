import type { Ctx } from '../core/context.js';
import { csatUrlFor } from '../csat/surveys.js';
import type { EventRecord } from '../events/models.js';
import type { EventFacts } from '../events/consumers.js';
import { Ticket } from '../tickets/models.js';
import { uuidv7 } from '../core/ids.js';
import { scoped } from '../db/tenant-scope.js';
import { mayNotify, plan, type KnownNames, type Planned } from './recipients.js';
import { prepared } from '../db/prepared.js';
import { writeBehind } from '../db/write-behind.js';
import { insertStatement } from '../db/insert-statement.js';
import { htmlToText, renderHtml, renderSubject, usesPlaceholder, type Values } from './render.js';
import { loadMailSettings } from './settings-store.js';
import { templateFor } from './templates.js';
import type { Identifier } from './template-defaults.js';
import { REPLY_MARKER, domainOf, notificationMessageId, rootMessageId } from './threading.js';
import { hasSmtpTarget, ownAddressOf } from './transports.js';
import { sendDueNotifications } from './send.js';
import { cachedConfig } from '../db/config-cache.js';
import { brandingFor, hasBranding } from '../branding/service.js';
import { brandMailHtml } from '../branding/html.js';

/**
 * The mail notifications' event consumer (registered in src/wiring.ts): for each event that
 * notifies someone it renders one row per recipient into the `notifications` outbox, in the
 * change's own transaction, so a rolled-back change leaves nothing to send. After commit the rows
 * are handed to the sender at once; the `mail-send` job retries what failed (1, 5, 30 min).
 */

/**
 * The template values. The requester's and the assignee's names come from the users the plan
 * already read (`known`), else from one read of those still missing.
 */
async function valuesFor(ctx: Ctx, ticket: Ticket, event: EventRecord, identifier: Identifier, withCsat: boolean, known: KnownNames): Promise<Values> {
  const data = event.data as Record<string, unknown>;
  // A reply to the customer names its author; an assignment its new assignee (the event says).
  const agentFromEvent = identifier === 'ticket.reply.customer' ? String(data.author_name ?? '')
    : identifier === 'ticket.assigned' && data.to !== undefined && data.to !== null ? String(data.to) : null;
  const wanted = [ticket.requester_id, agentFromEvent === null ? ticket.assigned_agent_id : null];
  const missing = wanted.filter((id): id is string => !!id && !known.has(id));
  if (missing.length) {
    const rows = await scoped(ctx, 'users').whereIn('users.id', missing).select('users.id', 'users.name') as { id: string; name: string }[];
    for (const row of rows) known.set(row.id, row.name);
  }
  const nameOf = (id: string | null) => (id ? known.get(id) : undefined) ?? '';
  const agentName = agentFromEvent ?? nameOf(ticket.assigned_agent_id);
  return {
    'ticket.number': String(ticket.ticket_number),
    'ticket.subject': ticket.subject,
    'ticket.url': `${ctx.deps.config.siteUrl}/tickets/${ticket.id}`,
    'customer.name': nameOf(ticket.requester_id),
    'agent.name': agentName,
    'message.body': typeof data.body === 'string' ? data.body : '',
    // The survey of the ticket's stay in the CSAT trigger category (the csat consumer, registered
    // before this one, issued it in this same transaction). Asked only when a template shows it,
    // since asking may issue a survey. Without CSAT (disabled, or the ticket not in the trigger
    // category) the link is the site, so a template's link never points nowhere.
    'csat.url': (withCsat ? await csatUrlFor(ctx, ticket.id) : null) ?? ctx.deps.config.siteUrl,
  };
}

async function enqueue(ctx: Ctx, event: EventRecord, ticket: Ticket, planned: Planned, domain: string, known: KnownNames): Promise<string[]> {
  const { identifier, recipients } = planned;
  const texts: Array<Awaited<ReturnType<typeof templateFor>>> = [];
  for (const recipient of recipients) texts.push(await templateFor(ctx, identifier, recipient.locale));
  const withCsat = texts.some((text) => usesPlaceholder(text.subject, 'csat.url') || usesPlaceholder(text.body_html, 'csat.url'));
  const values = await valuesFor(ctx, ticket, event, identifier, withCsat, known);
  // The tenant's branding frames the body once they have set any (src/branding).
  const brand = await cachedConfig(ctx, 'branding', async () => (await hasBranding(ctx) ? brandingFor(ctx.trx, ctx.tenantId) : null));
  // The customer's own first Message-ID is put before the root at send time (send.ts).
  const references = [rootMessageId(ticket.id, domain)];
  const notifications = recipients.map((recipient, index) => {
    const text = texts[index]!;
    const bodyHtml = brand ? brandMailHtml(brand, renderHtml(text.body_html, values)) : renderHtml(text.body_html, values);
    const subject = renderSubject(text.subject, values);
    const id = uuidv7(ctx.now.getTime());
    return {
      tenant_id: ctx.tenantId,
      id,
      identifier,
      event_id: event.id,
      ticket_id: ticket.id,
      recipient_id: recipient.userId,
      to_address: recipient.email,
      subject: subject.includes(`[#${ticket.ticket_number}]`) ? subject : `[#${ticket.ticket_number}] ${subject}`,
      body_html: `<div style="color:#8a8a8a;font-size:12px">${REPLY_MARKER}</div>\n${bodyHtml}`,
      body_text: `${REPLY_MARKER}\n\n${htmlToText(bodyHtml)}`,
      message_id: notificationMessageId(id, domain),
      in_reply_to: references[0],
      references,
      status: 'pending',
      next_attempt_at: ctx.now,
      created_at: ctx.now,
    };
  });
  // The rows and their Message-IDs (which thread the replies back, src/mail/threading.ts) in one
  // statement: PostgreSQL runs a data-modifying WITH to completion whether or not it is read.
  // Prepared, as every notification of one recipient count has the same text. Held and sent with
  // the transaction's next statement, the COMMIT at the latest (src/db/write-behind.ts): nothing
  // reads its answer.
  const messageIds = notifications.map((n) => ({
    tenant_id: ctx.tenantId, id: uuidv7(ctx.now.getTime()), direction: 'out', message_id: n.message_id, ticket_id: ticket.id, from_address: null, created_at: ctx.now,
  }));
  await writeBehind(prepared(insertStatement(ctx.trx, { table: 'mail_message_ids', rows: messageIds }, [{ name: 'queued', table: 'notifications', rows: notifications }])));
  return notifications.map((n) => n.id);
}

export async function notifyOnEvent(ctx: Ctx, event: EventRecord, facts: EventFacts): Promise<void> {
  if (!(await mayNotify(ctx, event))) return;
  // The emitter's copy of the ticket when it handed one over (current in this transaction).
  const ticket = (facts.ticket as Ticket | undefined) ?? await Ticket.findIn(ctx, event.ticket_id!);
  if (!ticket) return;
  const known: KnownNames = new Map();
  const planned = await plan(ctx, event, ticket, known, facts.users);
  if (!planned.some((p) => p.recipients.length)) return;
  const settings = await cachedConfig(ctx, 'mail_settings', () => loadMailSettings(ctx));
  const domain = domainOf(ownAddressOf(ctx.deps, settings));
  const ids: string[] = [];
  for (const p of planned) if (p.recipients.length) ids.push(...await enqueue(ctx, event, ticket, p, domain, known));
  // With no SMTP server anywhere, an attempt now could only record that: the mail-send job makes
  // the attempts on its schedule (and sends once a server is configured).
  if (!ids.length || !hasSmtpTarget(ctx.deps, settings)) return;
  const { deps, tenantId, now } = ctx;
  ctx.afterCommit(async () => {
    await sendDueNotifications(deps, now, { tenantId, ids });
  });
}
