import { createHash } from 'node:crypto';
import { SYSTEM_ACTOR, type Actor, type Ctx, type Deps } from '../core/context.js';
import { errors } from '../core/errors.js';
import { systemNow } from '../core/clock.js';
import { uuidv7 } from '../core/ids.js';
import { inTransaction } from '../db/transaction.js';
import { scoped } from '../db/tenant-scope.js';
import { findUserByAnyEmail, insertUser } from '../directory/user-store.js';
import { recordCustomerEvent } from '../directory/customer-events.js';
import { createTicket } from '../tickets/create.js';
import { Message, Ticket } from '../tickets/models.js';
import { addMessage } from '../conversation/messages.js';
import { removeStoredFiles, storeInboundFile } from '../conversation/inbound-files.js';
import { Status } from '../vocab/models.js';
import type { ChannelName, FetchedMedia, InboundMessage, WebhookRequest } from './adapter.js';
import { ADAPTERS } from './adapters/index.js';
import { adapterSource, setSourceHealth, type SourceRow } from './sources.js';
import { vendorHttp } from './vendor-http.js';
import type { HandshakeQuery, WebhookAck } from './schemas.js';

/**
 * Inbound channel webhooks (CONTRACT §17). The route's part is quick and loses nothing:
 * 1. find the candidate sources (the payload's phone number, page or account id; the bot token
 *    hash in the path; for messaging_c every connected source), verify the signature against each
 *    (constant time): none verifies → `401`, nothing is written;
 * 2. persist every customer message of the payload as received (`channel_inbound`), one row per
 *    vendor message id: the unique key drops a replay;
 * 3. answer `200`, and after commit process the rows (a job picks up whatever a crash left).
 * Processing a row, in one transaction: the sender's identity on the source (a customer, created
 * on first contact with the profile's name), the bot flow hook, threading into the identity's
 * open ticket on the source (else a new ticket of the channel), media fetched through the adapter
 * into attachments (a failed download leaves a note in the message instead), and the vendor's
 * timestamp as the identity's `last_inbound_at` (the 24-hour rule).
 */
const CANDIDATE_LIMIT = 200;
const MAX_ATTEMPTS = 5;
const LEASE_MS = 5 * 60_000;
const SUBJECT_MAX = 80;

/**
 * The bot flows' entry point, registered by the bots area (src/wiring.ts). It runs only while the
 * identity has no open ticket on the source (people have the conversation otherwise), and gets the
 * source's `bot_flow_id` (null: none) and `say(texts)`, which sends the bot's lines to the customer
 * through the adapter after commit. It answers `false` when no flow took the message, `true` when
 * the flow took it (no ticket message is written), or `{handoff: body}` when the flow passes the
 * conversation to people: `body` (the transcript) becomes the ticket's message instead of the text
 * (and `subject`, the customer's first line, a new ticket's subject).
 */
export type ChannelBotAnswer = boolean | { handoff: string; subject?: string };
export type ChannelBotResponder = (ctx: Ctx, turn: {
  sourceId: string; channel: ChannelName; userId: string; identityId: string; text: string;
  flowId: string | null; say: (texts: string[]) => void;
}) => Promise<ChannelBotAnswer>;
let botResponder: ChannelBotResponder | null = null;
export function registerChannelBotResponder(responder: ChannelBotResponder | null): void {
  botResponder = responder;
}

/** Sends bot lines to the sender after commit, one after the other; a failure is logged (the transcript keeps them). */
function botSayer(ctx: Ctx, source: SourceRow, to: string): (texts: string[]) => void {
  return (texts) => {
    const lines = texts.filter((text) => text.trim());
    if (!lines.length) return;
    const { deps } = ctx;
    ctx.afterCommit(async () => {
      const http = vendorHttp({ allowPrivate: deps.config.webhooksAllowPrivate });
      const adapter = ADAPTERS[source.channel];
      for (const text of lines) {
        try {
          await adapter.sendText(http, adapterSource(deps, source), to, text, uuidv7());
        } catch (error) {
          deps.log.error({ err: error, sourceId: source.id }, 'sending a bot reply failed');
          return;
        }
      }
    });
  };
}

const actorFor = (channel: ChannelName): Actor => ({ ...SYSTEM_ACTOR, name: `Inbound ${channel}` });

/** Sources that may have sent this payload, across tenants (the public webhook names no tenant). */
async function candidates(deps: Deps, channel: ChannelName, payload: unknown, params: Record<string, string>): Promise<SourceRow[]> {
  const adapter = ADAPTERS[channel];
  const base = deps.db('channel_sources').where('channel', channel).whereNot('status', 'disconnected')
    .comment('cross-tenant: the channel webhook names no tenant; the signature decides').limit(CANDIDATE_LIMIT);
  if (channel === 'messaging_b') {
    const hash = params.tokenHash ?? '';
    if (!/^[0-9a-f]{64}$/.test(hash)) return [];
    return await base.where('token_hash', hash) as SourceRow[];
  }
  if (adapter.lookupConfigKey) {
    const keys = adapter.lookupKeys(payload);
    if (!keys.length) return [];
    return await base.whereIn('lookup_key', keys.slice(0, 50)) as SourceRow[];
  }
  return await base.orderBy('created_at') as SourceRow[];
}

export async function receiveWebhook(deps: Deps, channel: ChannelName, request: WebhookRequest, now: Date): Promise<WebhookAck> {
  let payload: unknown;
  try {
    payload = JSON.parse(request.rawBody.toString('utf8'));
  } catch {
    // Unsigned garbage and signed garbage alike: nothing to keep. Checked after the signature below.
    payload = undefined;
  }
  const adapter = ADAPTERS[channel];
  const sources = payload === undefined && channel !== 'messaging_c' && channel !== 'messaging_b' ? [] : await candidates(deps, channel, payload, request.params);
  const verified = sources.filter((row) => adapter.verify(adapterSource(deps, row), request));
  if (!verified.length) throw errors.unauthenticated('The webhook signature is missing or does not match a connected source');
  if (payload === undefined) throw errors.invalid('body', 'is not valid JSON');
  const messages = adapter.parse(payload);
  let received = 0;
  let duplicates = 0;
  const failures = adapter.parseFailures?.(payload) ?? [];
  for (const source of verified) {
    const failed = failures.filter((f) => f.lookupKey === source.lookup_key);
    if (failed.length) await recordVendorFailures(deps, source, failed, now);
    const mine = messages.filter((m) => !adapter.lookupConfigKey || m.lookupKey === source.lookup_key);
    if (!mine.length) continue;
    const counts = await inTransaction(deps, { tenantId: source.tenant_id, actor: actorFor(channel), now }, async (ctx) => {
      let fresh = 0;
      for (const message of mine) {
        const inserted = await ctx.trx('channel_inbound').insert({
          tenant_id: ctx.tenantId, id: uuidv7(now.getTime()), source_id: source.id, external_id: message.externalId.slice(0, 500),
          payload: JSON.stringify(message), status: 'pending', received_at: now,
        }).onConflict(['tenant_id', 'source_id', 'external_id']).ignore().returning('id');
        if (inserted.length) fresh += 1;
      }
      if (fresh) ctx.afterCommit(() => scheduleProcessing(deps, ctx.tenantId));
      return fresh;
    });
    received += counts;
    duplicates += mine.length - counts;
    // Only the source whose key the payload named takes its messages; a signature-only channel takes them once.
    if (!adapter.lookupConfigKey) break;
  }
  return { received, duplicates };
}

/** A sent reply the vendor reports undeliverable later (a status callback) becomes `failed`, so an agent sees it and can dispatch again. */
async function recordVendorFailures(deps: Deps, source: SourceRow, failures: Array<{ externalId: string; error: string }>, now: Date): Promise<void> {
  await inTransaction(deps, { tenantId: source.tenant_id, actor: actorFor(source.channel), now }, async (ctx) => {
    for (const failure of failures.slice(0, 100)) {
      const rows = await scoped(ctx, 'channel_deliveries').where({ source_id: source.id, external_id: failure.externalId, status: 'sent' })
        .update({ status: 'failed', error: failure.error.slice(0, 1000), updated_at: now }).returning('message_id') as Array<{ message_id: string }>;
      for (const row of rows) {
        await scoped(ctx, 'messages').where('id', row.message_id)
          .update({ delivery: JSON.stringify({ status: 'failed', error: failure.error.slice(0, 1000), external_id: failure.externalId }) });
      }
    }
  });
}

/** The GET handshake: the challenge when the verify token is a connected source's, else 403. */
export async function handshake(deps: Deps, channel: ChannelName, query: HandshakeQuery): Promise<string> {
  const token = query['hub.verify_token'] ?? '';
  if (query['hub.mode'] !== 'subscribe' || !token || query['hub.challenge'] === undefined) throw errors.forbidden('The handshake needs hub.mode=subscribe, hub.verify_token and hub.challenge');
  const hash = createHash('sha256').update(token, 'utf8').digest('hex');
  const row = await deps.db('channel_sources').where({ channel, verify_token_hash: hash }).whereNot('status', 'disconnected')
    .comment('cross-tenant: the handshake names no tenant; the verify token decides').first();
  if (!row) throw errors.forbidden('The verify token does not match a connected source');
  return query['hub.challenge'];
}

const scheduled = new Set<string>();
function scheduleProcessing(deps: Deps, tenantId: string): void {
  if (scheduled.has(tenantId)) return;
  scheduled.add(tenantId);
  setImmediate(() => {
    scheduled.delete(tenantId);
    processInbound(deps, systemNow(), { tenantId }).catch((error) => deps.log.error({ err: error }, 'channel inbound processing failed'));
  });
}

interface InboundRow { tenant_id: string; id: string; source_id: string; external_id: string; payload: InboundMessage; attempts: number }

/** Processes pending inbound rows (of one tenant, or all for the job) until none is left. */
export async function processInbound(deps: Deps, now: Date, options: { tenantId?: string } = {}): Promise<{ processed: number; failed: number }> {
  const counts = { processed: 0, failed: 0 };
  for (;;) {
    // A claim is a lease: the row stays pending (nothing is lost if this process dies) but no
    // other processor takes it until the lease ends; a failure retries after a growing pause.
    const row = await deps.db.transaction(async (trx) => {
      const q = trx('channel_inbound').where('status', 'pending')
        .where((w) => { w.whereNull('locked_until').orWhere('locked_until', '<=', now); })
        .orderBy('received_at').orderBy('id').first().forUpdate().skipLocked();
      if (options.tenantId) q.where('tenant_id', options.tenantId);
      else q.comment('cross-tenant: the job processes every tenant\'s inbound messages');
      const claimed = await q as InboundRow | undefined;
      if (!claimed) return null;
      await trx('channel_inbound').where({ tenant_id: claimed.tenant_id, id: claimed.id }).update({ attempts: claimed.attempts + 1, locked_until: new Date(now.getTime() + LEASE_MS) });
      return claimed;
    });
    if (!row) return counts;
    try {
      await processOne(deps, row, now);
      counts.processed += 1;
    } catch (error) {
      const message = (error as Error).message.slice(0, 1000);
      deps.log.warn({ err: error, tenant_id: row.tenant_id, inbound_id: row.id }, 'channel inbound message failed');
      const final = row.attempts + 1 >= MAX_ATTEMPTS;
      await deps.db('channel_inbound').where({ tenant_id: row.tenant_id, id: row.id })
        .update({ status: final ? 'failed' : 'pending', error: message, processed_at: final ? now : null, locked_until: new Date(now.getTime() + (row.attempts + 1) * 60_000) });
      if (final) counts.failed += 1;
    }
  }
}

/** Downloads a message's media before the transaction; a failure becomes a note. */
async function fetchAll(deps: Deps, source: SourceRow, message: InboundMessage): Promise<{ files: FetchedMedia[]; notes: string[] }> {
  const adapter = ADAPTERS[source.channel];
  const http = vendorHttp({ allowPrivate: deps.config.webhooksAllowPrivate });
  const files: FetchedMedia[] = [];
  const notes: string[] = [];
  for (const media of message.media.slice(0, 10)) {
    try {
      files.push(await adapter.fetchMedia(http, adapterSource(deps, source), media));
    } catch (error) {
      notes.push(`[${media.kind} could not be downloaded from ${source.channel}: ${(error as Error).message.slice(0, 200)}]`);
    }
  }
  return { files, notes };
}

async function profileName(deps: Deps, source: SourceRow, senderId: string): Promise<string | null> {
  const adapter = ADAPTERS[source.channel];
  if (!adapter.profileName) return null;
  try {
    return await adapter.profileName(vendorHttp({ allowPrivate: deps.config.webhooksAllowPrivate, timeoutMs: 5000 }), adapterSource(deps, source), senderId);
  } catch {
    return null;
  }
}

interface IdentityRow { tenant_id: string; id: string; source_id: string; external_id: string; user_id: string; display_name: string | null; last_inbound_at: Date | null }

/** The sender's identity on the source, and so the customer; created on first contact. */
async function identityOf(ctx: Ctx, source: SourceRow, message: InboundMessage, name: string | null): Promise<IdentityRow> {
  const found = await scoped(ctx, 'channel_identities').where({ source_id: source.id, external_id: message.senderId }).first() as IdentityRow | undefined;
  if (found) return found;
  const local = message.senderId.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'sender';
  const email = `${source.channel.replace('_', '-')}.${local}@channels.invalid`;
  let user = await findUserByAnyEmail(ctx, email);
  if (!user) {
    const display = (name ?? '').trim() || (source.channel === 'messaging_a' ? `+${message.senderId}` : `${source.channel} ${message.senderId}`);
    user = await insertUser(ctx, { email, name: display.slice(0, 200), role: 'customer', ...(source.channel === 'messaging_a' ? { phone: `+${message.senderId}` } : {}) });
    await recordCustomerEvent(ctx, 'customer.created', user);
  }
  const [row] = await ctx.trx('channel_identities').insert({
    tenant_id: ctx.tenantId, id: uuidv7(ctx.now.getTime()), source_id: source.id, external_id: message.senderId, user_id: user.id,
    display_name: name, last_inbound_at: null, created_at: ctx.now,
  }).returning('*') as IdentityRow[];
  return row!;
}

/** The identity's latest ticket on this source that is not closed. */
async function openTicketOf(ctx: Ctx, identity: IdentityRow): Promise<Ticket | null> {
  const links = await scoped(ctx, 'channel_tickets').where({ identity_id: identity.id }).orderBy('created_at', 'desc').limit(5) as Array<{ ticket_id: string }>;
  for (const link of links) {
    const ticket = await Ticket.findIn(ctx, link.ticket_id);
    if (!ticket) continue;
    const status = await Status.findIn(ctx, ticket.status_id);
    if (status && status.category !== 'closed' && !ticket.merged_into_id) return ticket;
  }
  return null;
}

async function processOne(deps: Deps, row: InboundRow, now: Date): Promise<void> {
  const source = await deps.db('channel_sources').where({ tenant_id: row.tenant_id, id: row.source_id }).first() as SourceRow | undefined;
  if (!source || source.status === 'disconnected') {
    await deps.db('channel_inbound').where({ tenant_id: row.tenant_id, id: row.id }).update({ status: 'failed', error: 'the source was disconnected', processed_at: now });
    return;
  }
  const message = row.payload;
  const { files, notes } = await fetchAll(deps, source, message);
  const known = await deps.db('channel_identities').where({ tenant_id: row.tenant_id, source_id: source.id, external_id: message.senderId }).first();
  const name = message.senderName ?? (known ? null : await profileName(deps, source, message.senderId));
  const written: string[] = [];
  try {
    await inTransaction(deps, { tenantId: row.tenant_id, actor: actorFor(source.channel), now }, async (ctx) => {
      // The guard against a second processor: the row is locked here and must still be pending.
      const current = await scoped(ctx, 'channel_inbound').where('id', row.id).forUpdate().first() as { status: string } | undefined;
      if (current?.status !== 'pending') return;
      // One sender's messages are handled one at a time: a first contact creates one identity and one ticket.
      await ctx.trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`channel-sender:${source.id}:${message.senderId}`]);
      const identity = await identityOf(ctx, source, message, name);
      const vendorTime = message.timestamp ? new Date(message.timestamp) : now;
      if (!identity.last_inbound_at || identity.last_inbound_at < vendorTime) {
        await scoped(ctx, 'channel_identities').where('id', identity.id).update({ last_inbound_at: vendorTime, ...(name ? { display_name: name } : {}) });
      }
      const text = [message.text.trim(), ...notes].filter(Boolean).join('\n\n') || (files.length ? `(${files.length === 1 ? 'attachment' : `${files.length} attachments`})` : '(empty message)');
      let ticket = await openTicketOf(ctx, identity);
      let body = text;
      let opening = message.text;
      if (!ticket && botResponder) {
        const answer = await botResponder(ctx, {
          sourceId: source.id, channel: source.channel, userId: identity.user_id, identityId: identity.id, text,
          flowId: source.config.bot_flow_id ?? null, say: botSayer(ctx, source, message.senderId),
        });
        if (answer === true) {
          await scoped(ctx, 'channel_inbound').where('id', row.id).update({ status: 'done', error: notes.join('\n') || null, processed_at: now });
          return;
        }
        if (answer) {
          body = answer.handoff;
          opening = answer.subject ?? opening;
        }
      }
      const user = (await ctx.trx('users').where({ tenant_id: ctx.tenantId, id: identity.user_id }).first()) as { id: string; name: string };
      let messageId: string;
      if (ticket) {
        messageId = (await addMessage(ctx, ticket.id, { body, channel: source.channel, author: { id: user.id, name: user.name, isAgent: false } })).id;
      } else {
        const firstLine = (opening.trim().split('\n')[0] ?? '').slice(0, SUBJECT_MAX).trim();
        const created = await createTicket(ctx, { subject: firstLine || `Message from ${user.name}`.slice(0, SUBJECT_MAX), body, requester_id: user.id, channel: source.channel });
        ticket = (await Ticket.findIn(ctx, created.id))!;
        await ctx.trx('channel_tickets').insert({ tenant_id: ctx.tenantId, ticket_id: ticket.id, source_id: source.id, identity_id: identity.id, created_at: now });
        messageId = (await Message.scoped(ctx).where('ticket_id', ticket.id).orderBy('created_at').orderBy('id').first())!.id;
      }
      let last: string | undefined;
      for (const file of files) last = await storeInboundFile(ctx, ticket.id, messageId, file, written, last);
      await scoped(ctx, 'channel_inbound').where('id', row.id).update({ status: 'done', ticket_id: ticket.id, message_id: messageId, error: notes.join('\n') || null, processed_at: now });
    });
    if (source.status === 'error' && !notes.length) await setSourceHealth({ trx: deps.db, tenantId: row.tenant_id, now }, source.id, null);
  } catch (error) {
    await removeStoredFiles(deps.config, written);
    throw error;
  }
}
