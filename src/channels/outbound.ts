import type { Ctx, Deps } from '../core/context.js';
import { errors } from '../core/errors.js';
import { systemNow } from '../core/clock.js';
import { scoped } from '../db/tenant-scope.js';
import type { MessageAdded } from '../conversation/hooks.js';
import { messageOut } from '../conversation/messages.js';
import { loadVisibleTicket } from '../conversation/ticket-port.js';
import { Attachment, Message } from '../tickets/models.js';
import type { Message as MessageOut } from '../conversation/schemas.js';
import { CHANNEL_NAMES, type ChannelName } from './adapter.js';
import { ADAPTERS } from './adapters/index.js';
import { adapterSource, setSourceHealth, type SourceRow } from './sources.js';
import { vendorHttp, VendorError } from './vendor-http.js';
import type { Delivery } from './schemas.js';
import { mediaToken, mediaUrl } from './media.js';

/**
 * Outbound (CONTRACT §17): a public staff reply on a channel ticket is queued, inside the reply's
 * transaction, as a `channel_deliveries` row and shown on the message as `delivery: pending`; after
 * commit it is sent through the adapter. A 429, a 5xx or a network failure is retried with back-off
 * (the vendor's Retry-After when longer) by the `channel-delivery` job; a refusal (other 4xx) or the
 * last attempt marks it `failed` with the vendor's error. `POST …/dispatch` re-sends a pending or
 * failed one at once. `messaging_a` refuses free text 24 hours after the customer's last message
 * (the vendor's timestamp): `409 conflict` with `details.reason: "template_required"`.
 *
 * A reply with attachments is sent as its text (when not empty), then one media message per
 * attachment, by a public link valid 24 hours (media.ts). The delivery covers all parts: `sent` only
 * when every part was accepted. Each accepted part is recorded in `parts` at once, so a retry or a
 * dispatch re-sends only the parts not yet accepted; `external_id` is the first part's.
 */
export const RETRY_DELAYS_MS = [30_000, 2 * 60_000, 10 * 60_000, 60 * 60_000];
export const WINDOW_MS = 24 * 3600 * 1000;
const BATCH = 20;

const isChannel = (value: string): value is ChannelName => (CHANNEL_NAMES as readonly string[]).includes(value);

interface LinkRow { ticket_id: string; source_id: string; identity_id: string }
interface IdentityRow { id: string; external_id: string; last_inbound_at: Date | null }
interface DeliveryRow {
  tenant_id: string; message_id: string; ticket_id: string; source_id: string; identity_id: string; status: 'pending' | 'sent' | 'failed';
  attempts: number; next_attempt_at: Date | null; error: string | null; external_id: string | null;
  parts?: SentPart[] | string;
}
/** A part of a delivery the vendor accepted: `text` or `attachment:<id>`, with the vendor's id. */
interface SentPart { key: string; external_id: string | null }

/** Contexts whose replies are sent by their caller (a template send): the hook leaves them alone. */
const selfSent = new WeakSet<object>();
export function markSelfSent(ctx: Ctx): void {
  selfSent.add(ctx);
}

export function assertWithinWindow(channel: ChannelName, identity: Pick<IdentityRow, 'last_inbound_at'>, now: Date): void {
  if (channel !== 'messaging_a') return;
  if (identity.last_inbound_at && now.getTime() - identity.last_inbound_at.getTime() <= WINDOW_MS) return;
  throw errors.conflict('The customer\'s last message is over 24 hours old: only an approved template may be sent now', {
    reason: 'template_required', last_customer_message_at: identity.last_inbound_at?.toISOString() ?? null,
  });
}

/** The message hook: queue a public staff reply of a channel ticket. */
export async function queueChannelReply(ctx: Ctx, { ticket, message }: MessageAdded): Promise<void> {
  if (!message.is_agent || message.is_private || !isChannel(ticket.channel) || selfSent.has(ctx)) return;
  const link = await scoped(ctx, 'channel_tickets').where('ticket_id', ticket.id).first() as LinkRow | undefined;
  if (!link) return;
  const source = await scoped(ctx, 'channel_sources').where('id', link.source_id).first() as SourceRow;
  const identity = await scoped(ctx, 'channel_identities').where('id', link.identity_id).first() as IdentityRow;
  assertWithinWindow(source.channel, identity, ctx.now);
  const failed = source.status === 'disconnected';
  const delivery: Delivery = { status: failed ? 'failed' : 'pending', error: failed ? 'the channel source is disconnected' : null, external_id: null };
  await ctx.trx('channel_deliveries').insert({
    tenant_id: ctx.tenantId, message_id: message.id, ticket_id: ticket.id, source_id: source.id, identity_id: identity.id,
    status: delivery.status, attempts: 0, next_attempt_at: failed ? null : ctx.now, error: delivery.error, created_at: ctx.now, updated_at: ctx.now,
  });
  await scoped(ctx, 'messages').where('id', message.id).update({ delivery: JSON.stringify(delivery) });
  (message as Message & { delivery?: Delivery }).delivery = delivery;
  if (!failed) scheduleDrain(ctx);
}

/**
 * The attachments hook: files added to a reply that has a channel delivery are sent as media
 * messages; the delivery turns `pending` again and only the parts not yet accepted go out.
 */
export async function queueChannelAttachments(ctx: Ctx, { message }: { message: Message }): Promise<void> {
  const row = await scoped(ctx, 'channel_deliveries').where('message_id', message.id).forUpdate().first() as DeliveryRow | undefined;
  if (!row) return;
  const parts: SentPart[] = typeof row.parts === 'string' ? JSON.parse(row.parts) as SentPart[] : [...(row.parts ?? [])];
  // A text sent before parts were recorded is not sent again.
  if (row.status === 'sent' && parts.length === 0) parts.push({ key: 'text', external_id: row.external_id });
  const delivery: Delivery = { status: 'pending', error: null, external_id: row.external_id };
  await scoped(ctx, 'channel_deliveries').where('message_id', message.id).update({
    status: 'pending', attempts: 0, error: null, next_attempt_at: ctx.now, parts: JSON.stringify(parts), updated_at: ctx.now,
  });
  await scoped(ctx, 'messages').where('id', message.id).update({ delivery: JSON.stringify(delivery) });
  scheduleDrain(ctx);
}

const scheduled = new WeakSet<object>();
function scheduleDrain(ctx: Ctx): void {
  if (scheduled.has(ctx)) return;
  scheduled.add(ctx);
  const { deps, tenantId } = ctx;
  ctx.afterCommit(() => {
    setImmediate(() => {
      drainDeliveries(deps, systemNow(), { tenantId }).catch((error) => deps.log.error({ err: error }, 'channel delivery failed'));
    });
  });
}

/** One attempt: sends and records the outcome on the queue row and the message. */
async function attempt(deps: Deps, trx: Ctx['trx'], row: DeliveryRow, now: Date): Promise<'sent' | 'retry' | 'failed'> {
  const scope = { trx, tenantId: row.tenant_id, now };
  const source = await scoped(scope, 'channel_sources').where('id', row.source_id).first() as SourceRow | undefined;
  const identity = await scoped(scope, 'channel_identities').where('id', row.identity_id).first() as IdentityRow | undefined;
  const message = await scoped(scope, 'messages').where('id', row.message_id).first() as { body: string } | undefined;
  let outcome: { status: 'sent' | 'retry' | 'failed'; error: string | null; externalId: string | null; retryAfter: number | null };
  if (!source || !identity || !message || source.status === 'disconnected') {
    outcome = { status: 'failed', error: 'the channel source is disconnected', externalId: null, retryAfter: null };
  } else {
    const done: SentPart[] = typeof row.parts === 'string' ? JSON.parse(row.parts) as SentPart[] : [...(row.parts ?? [])];
    const accepted = new Set(done.map((part) => part.key));
    const record = async (part: SentPart) => {
      done.push(part);
      await scoped(scope, 'channel_deliveries').where('message_id', row.message_id).update({ parts: JSON.stringify(done) });
    };
    try {
      const adapter = ADAPTERS[source.channel];
      const http = vendorHttp({ allowPrivate: deps.config.webhooksAllowPrivate });
      const target = adapterSource(deps, source);
      const attachments = await scoped(scope, 'attachments').where('message_id', row.message_id).orderBy('created_at').orderBy('id') as Array<{ id: string; filename: string; content_type: string }>;
      if ((message.body.trim() !== '' || attachments.length === 0) && !accepted.has('text')) {
        const sent = await adapter.sendText(http, target, identity.external_id, message.body, row.message_id);
        await record({ key: 'text', external_id: sent.externalId });
      }
      for (const file of attachments) {
        if (accepted.has(`attachment:${file.id}`)) continue;
        const url = mediaUrl(deps, mediaToken(deps, row.tenant_id, file.id, now));
        const sent = await adapter.sendMedia(http, target, identity.external_id, { url, contentType: file.content_type, filename: file.filename });
        await record({ key: `attachment:${file.id}`, external_id: sent.externalId });
      }
      outcome = { status: 'sent', error: null, externalId: done[0]?.external_id ?? null, retryAfter: null };
    } catch (error) {
      const e = error instanceof VendorError ? error : new VendorError((error as Error).message, null, true);
      const last = row.attempts + 1 > RETRY_DELAYS_MS.length;
      outcome = { status: e.retryable && !last ? 'retry' : 'failed', error: e.message.slice(0, 1000), externalId: done[0]?.external_id ?? null, retryAfter: e.retryAfterSeconds };
      if (e.status === 401 || e.status === 403) await setSourceHealth(scope, source.id, `${source.channel} refused the credentials: ${e.message.slice(0, 300)}`);
    }
  }
  const attempts = row.attempts + 1;
  const delay = outcome.status === 'retry' ? Math.max(RETRY_DELAYS_MS[row.attempts]!, (outcome.retryAfter ?? 0) * 1000) : 0;
  const status = outcome.status === 'retry' ? 'pending' : outcome.status;
  await scoped(scope, 'channel_deliveries').where('message_id', row.message_id).update({
    status, attempts, error: outcome.error, external_id: outcome.externalId,
    next_attempt_at: outcome.status === 'retry' ? new Date(now.getTime() + delay) : null, updated_at: now,
  });
  const delivery: Delivery = { status, error: outcome.error, external_id: outcome.externalId };
  await scoped(scope, 'messages').where('id', row.message_id).update({ delivery: JSON.stringify(delivery) });
  if (outcome.status === 'sent' && source?.status === 'error') await setSourceHealth(scope, source.id, null);
  return outcome.status;
}

/** Sends the deliveries due now (of one tenant, or of all for the job); answers the counts. */
export async function drainDeliveries(deps: Deps, now: Date, options: { tenantId?: string } = {}): Promise<Record<string, number>> {
  const counts = { sent: 0, retried: 0, failed: 0 };
  for (;;) {
    const handled = await deps.db.transaction(async (trx) => {
      const q = trx('channel_deliveries').whereNotNull('next_attempt_at').where('next_attempt_at', '<=', now)
        .orderBy('next_attempt_at').limit(BATCH).forUpdate().skipLocked();
      if (options.tenantId) q.where('tenant_id', options.tenantId);
      else q.comment('cross-tenant: the delivery job drains every tenant\'s queue');
      const rows = await q as DeliveryRow[];
      for (const row of rows) {
        const result = await attempt(deps, trx, row, now);
        counts[result === 'retry' ? 'retried' : result] += 1;
      }
      return rows.length;
    });
    if (handled < BATCH) return counts;
  }
}

/** `POST /tickets/{id}/messages/{msgId}/dispatch`: re-sends a pending or failed delivery now. */
export async function dispatchMessage(ctx: Ctx, ticketId: string, messageId: string): Promise<MessageOut> {
  const ticket = await loadVisibleTicket(ctx, ticketId);
  const message = await Message.scoped(ctx).findOne({ 'messages.id': messageId, 'messages.ticket_id': ticket.id });
  if (!message) throw errors.notFound('message', messageId);
  const row = await scoped(ctx, 'channel_deliveries').where('message_id', messageId).forUpdate().first() as DeliveryRow | undefined;
  if (!row) throw errors.conflict('This message has no channel delivery (only public staff replies on channel tickets have one)', { reason: 'no_delivery' });
  if (row.status === 'sent') throw errors.conflict('This message was already sent', { reason: 'already_sent' });
  const source = await scoped(ctx, 'channel_sources').where('id', row.source_id).first() as SourceRow;
  const identity = await scoped(ctx, 'channel_identities').where('id', row.identity_id).first() as IdentityRow;
  assertWithinWindow(source.channel, identity, ctx.now);
  // A manual dispatch starts a fresh round of attempts.
  await attempt(ctx.deps, ctx.trx, { ...row, tenant_id: ctx.tenantId, attempts: 0 }, ctx.now);
  const fresh = (await Message.scoped(ctx).findOne({ 'messages.id': messageId }))!;
  const attachments = await Attachment.scoped(ctx).where('message_id', messageId).orderBy('id');
  return messageOut(fresh, attachments);
}

export async function channelDeliveryJob(deps: Deps, now: Date): Promise<Record<string, unknown>> {
  return { ...(await drainDeliveries(deps, now)) };
}
