import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { uuidv7 } from '../core/ids.js';
import { paginatePage, type Page } from '../core/pagination.js';
import { scoped } from '../db/tenant-scope.js';
import { recordAudit } from '../audit/service.js';
import { addMessage } from '../conversation/messages.js';
import { loadVisibleTicket } from '../conversation/ticket-port.js';
import type { Message as MessageOut } from '../conversation/schemas.js';
import type { TemplateInfo } from './adapter.js';
import { messagingA } from './adapters/messaging-a.js';
import { markSelfSent } from './outbound.js';
import { adapterSource, type SourceRow } from './sources.js';
import { vendorHttp, VendorError } from './vendor-http.js';
import type { TemplateCreate, TemplateListQuery, TemplateOut, TemplateSendIn } from './schemas.js';

/**
 * Message templates of `messaging_a` (CONTRACT §17): the only thing the vendor lets a business send
 * 24 hours after the customer's last message. `GET` syncs them from the vendor (best effort: the
 * stored list answers when the vendor cannot), `POST` submits one for review (`pending`), and
 * `send` sends an approved one on a ticket: the message is written with its delivery, and audited.
 */
interface TemplateRow {
  tenant_id: string; id: string; source_id: string; name: string; language: string; category: string | null; status: string;
  components: unknown[]; external_id: string | null; updated_at: Date;
}

const out = (row: TemplateRow): TemplateOut => ({
  id: row.id, source_id: row.source_id, name: row.name, language: row.language, category: row.category, status: row.status,
  components: row.components, updated_at: toRfc3339(row.updated_at)!,
});

async function sourceFor(ctx: Ctx, id: string | undefined): Promise<SourceRow> {
  const qb = scoped(ctx, 'channel_sources').where('channel', 'messaging_a').whereNot('status', 'disconnected').orderBy('created_at');
  if (id) qb.where('id', id);
  const rows = await qb.limit(2) as SourceRow[];
  if (!rows.length) throw id ? errors.notFound('messaging_a source', id) : errors.invalid('source_id', 'no messaging_a source is connected');
  if (!id && rows.length > 1) throw errors.invalid('source_id', 'is required: more than one messaging_a source is connected');
  return rows[0]!;
}

async function upsert(ctx: Ctx, sourceId: string, t: TemplateInfo): Promise<TemplateRow> {
  const [row] = await ctx.trx('channel_templates').insert({
    tenant_id: ctx.tenantId, id: uuidv7(ctx.now.getTime()), source_id: sourceId, name: t.name, language: t.language, category: t.category,
    status: t.status, components: JSON.stringify(t.components), external_id: t.externalId, created_at: ctx.now, updated_at: ctx.now,
  }).onConflict(['tenant_id', 'source_id', 'name', 'language']).merge(['category', 'status', 'components', 'external_id', 'updated_at']).returning('*') as TemplateRow[];
  return row!;
}

export async function listTemplates(ctx: Ctx, query: TemplateListQuery): Promise<Page<TemplateOut>> {
  const sources = await scoped(ctx, 'channel_sources').where('channel', 'messaging_a').whereNot('status', 'disconnected')
    .modify((qb) => { if (query.source_id) qb.where('id', query.source_id); }) as SourceRow[];
  for (const source of sources) {
    if (!source.config.business_account_id) continue;
    try {
      const templates = await messagingA.listTemplates!(vendorHttp({ allowPrivate: ctx.deps.config.webhooksAllowPrivate }), adapterSource(ctx.deps, source), );
      for (const t of templates.slice(0, 500)) await upsert(ctx, source.id, t);
    } catch (error) {
      ctx.deps.log.warn({ err: (error as Error).message, source_id: source.id }, 'template sync failed; listing the stored templates');
    }
  }
  const qb = scoped(ctx, 'channel_templates').orderBy('name').orderBy('language').orderBy('id');
  if (query.source_id) qb.where('source_id', query.source_id);
  return paginatePage<TemplateRow, TemplateOut>(query, qb, out);
}

export async function submitTemplate(ctx: Ctx, input: TemplateCreate): Promise<TemplateOut> {
  const source = await sourceFor(ctx, input.source_id);
  if (!source.config.business_account_id) throw errors.invalid('source_id', 'the source has no business_account_id in its config');
  let answer: TemplateInfo;
  try {
    answer = await messagingA.submitTemplate!(vendorHttp({ allowPrivate: ctx.deps.config.webhooksAllowPrivate }), adapterSource(ctx.deps, source), {
      name: input.name, language: input.language ?? 'en', category: input.category, components: input.components,
    });
  } catch (error) {
    throw errors.invalid('name', `was refused by messaging_a: ${(error as Error).message.slice(0, 300)}`);
  }
  const row = await upsert(ctx, source.id, { ...answer, status: answer.status || 'pending' });
  await recordAudit(ctx, { action: 'channel_template.submitted', resourceType: 'channel_template', resourceId: row.id, changes: { name: row.name, language: row.language, category: row.category } });
  return out(row);
}

/** The text the ticket shows for a template: its body with {{n}} filled in, else its name and parameters. */
function rendered(row: TemplateRow, parameters: Array<{ text: string }>): string {
  const body = (row.components as Array<{ type?: string; text?: string }>).find((c) => String(c.type).toUpperCase() === 'BODY')?.text;
  if (body) return body.replace(/\{\{(\d+)\}\}/g, (_m, n: string) => parameters[Number(n) - 1]?.text ?? `{{${n}}}`);
  return `[template ${row.name}]${parameters.length ? ` ${parameters.map((p) => p.text).join(' | ')}` : ''}`;
}

export async function sendTemplate(ctx: Ctx, input: TemplateSendIn): Promise<MessageOut> {
  const ticket = await loadVisibleTicket(ctx, input.ticket_id);
  const link = await scoped(ctx, 'channel_tickets').where('ticket_id', ticket.id).first() as { source_id: string; identity_id: string } | undefined;
  if (ticket.channel !== 'messaging_a' || !link) throw errors.invalid('ticket_id', 'is not a messaging_a conversation');
  const source = await scoped(ctx, 'channel_sources').where('id', link.source_id).first() as SourceRow;
  if (source.status === 'disconnected') throw errors.conflict('The ticket\'s messaging_a source is disconnected');
  const language = input.language ?? 'en';
  const template = await scoped(ctx, 'channel_templates').where({ source_id: source.id, name: input.template_name, language }).first() as TemplateRow | undefined;
  if (!template) throw errors.invalid('template_name', `is not a template of this source in language ${language}`);
  if (template.status !== 'approved') throw errors.invalid('template_name', `is ${template.status}, not approved`);
  const identity = await scoped(ctx, 'channel_identities').where('id', link.identity_id).first() as { external_id: string };
  const parameters = input.parameters ?? [];
  let delivery: { status: 'sent' | 'failed'; error: string | null; external_id: string | null };
  try {
    const sent = await messagingA.sendTemplate!(vendorHttp({ allowPrivate: ctx.deps.config.webhooksAllowPrivate }), adapterSource(ctx.deps, source), identity.external_id, { name: template.name, language, parameters });
    delivery = { status: 'sent', error: null, external_id: sent.externalId };
  } catch (error) {
    delivery = { status: 'failed', error: (error instanceof VendorError ? error.message : String(error)).slice(0, 1000), external_id: null };
  }
  markSelfSent(ctx);
  const message = await addMessage(ctx, ticket.id, { body: rendered(template, parameters), channel: 'messaging_a' });
  await scoped(ctx, 'messages').where('id', message.id).update({ delivery: JSON.stringify(delivery) });
  await recordAudit(ctx, {
    action: 'channel_template.sent', resourceType: 'ticket', resourceId: ticket.id,
    changes: { template_name: template.name, language, parameters: parameters.map((p) => p.text), message_id: message.id, delivery: delivery.status },
  });
  return { ...message, delivery };
}
