import type { Ctx } from '../core/context.js';
import { AppError, errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { uuidv7 } from '../core/ids.js';
import { scoped } from '../db/tenant-scope.js';
import { botTurn, endSession, sessionTranscript, type BotReply } from '../bots/run.js';
import { findFlow } from '../bots/service.js';
import { createTicket } from '../tickets/create.js';
import { addMessage } from '../conversation/messages.js';
import { applyTicketChanges } from '../tickets/changes.js';
import { Ticket } from '../tickets/models.js';
import { Status } from '../vocab/models.js';
import { emitChatEvent } from './events.js';
import { announce, conversationOut, loadConversation, type ConversationRow, type VisitorRow } from './conversation-rows.js';
import { offerWaiting, onlineAgentCount } from './offering.js';
import type { WidgetRow } from './widgets.js';
import type { ChatMessage, Conversation } from './schemas.js';

/**
 * Conversations (CONTRACT §16): `bot` while a bot flow talks, `waiting` for people, `active` once
 * an agent claims it, `ended`. A conversation is backed by a ticket of channel `webchat`, created
 * when it leaves the bot (or at once without one) through the tickets area's create, and every
 * later line is that ticket's message through THE message function, so SLA, timeline, webhooks
 * and reports see chat like any channel. What the visitor and the console see line by line is
 * kept as `message` events (events.ts), which the visitor's stream replays.
 */
/** One line of the conversation: shown to the visitor (stream) and the console (`message.created`). */
export async function postLine(
  ctx: Ctx, conversationId: string, from: ChatMessage['from'], authorName: string, text: string, choices: string[] | null = null,
): Promise<ChatMessage> {
  const message: ChatMessage = {
    id: uuidv7(ctx.now.getTime()), conversation_id: conversationId, from, author_name: authorName, text, choices,
    created_at: toRfc3339(ctx.now)!,
  };
  await emitChatEvent(ctx, 'visitor', 'message', conversationId, message as unknown as Record<string, unknown>);
  await emitChatEvent(ctx, 'staff', 'message.created', conversationId, message as unknown as Record<string, unknown>);
  await scoped(ctx, 'webchat_conversations').where('id', conversationId).update({ last_message_at: ctx.now });
  return message;
}

async function update(ctx: Ctx, id: string, columns: Partial<ConversationRow>): Promise<ConversationRow> {
  const [row] = await scoped(ctx, 'webchat_conversations').where('id', id).update(columns).returning('*') as ConversationRow[];
  return row!;
}

function visitorLabel(visitor: VisitorRow): string {
  return visitor.name?.trim() || visitor.email || 'Visitor';
}

/**
 * The conversation leaves the bot (or starts without one): its ticket is created, with what was
 * said so far as the first message, the requester being the visitor (found or created as a
 * customer by email; a visitor who gave none gets an address of the reserved `.invalid` domain,
 * so no mail ever leaves for them). Then it waits and is offered to an online agent.
 */
async function handToPeople(ctx: Ctx, row: ConversationRow, visitor: VisitorRow, widget: WidgetRow, opening: string | null): Promise<ConversationRow> {
  const transcript = row.bot_session_id ? await sessionTranscript(ctx, row.bot_session_id) : [];
  const lines = transcript.map((e) => `${e.from === 'bot' ? 'Bot' : visitorLabel(visitor)}: ${e.text}`);
  const body = lines.length ? lines.join('\n') : (opening?.trim() || 'Chat started');
  const email = visitor.email ?? `visitor-${visitor.id}@webchat.invalid`;
  const ticket = await createTicket(ctx, {
    subject: `Chat with ${visitorLabel(visitor)}`.slice(0, 500), body, channel: 'webchat',
    requester: { email, ...(visitor.name ? { name: visitor.name } : {}) },
  });
  await scoped(ctx, 'webchat_visitors').where('id', visitor.id).update({ user_id: ticket.requester_id });
  visitor.user_id = ticket.requester_id;
  let updated = await update(ctx, row.id, { status: 'waiting', ticket_id: ticket.id });
  await announce(ctx, updated);
  if ((await onlineAgentCount(ctx)) === 0 && widget.offline_message.trim()) {
    await postLine(ctx, row.id, 'bot', widget.name, widget.offline_message);
  }
  await offerWaiting(ctx);
  updated = await loadConversation(ctx, row.id);
  return updated;
}

async function sayBotReplies(ctx: Ctx, conversationId: string, widget: WidgetRow, replies: BotReply[]): Promise<void> {
  for (const reply of replies) await postLine(ctx, conversationId, 'bot', widget.name, reply.text, reply.choices);
}

/** The visitor's collected name/email go onto the visitor (and so onto the ticket's requester). */
async function adoptFields(ctx: Ctx, visitor: VisitorRow, fields: Record<string, string>): Promise<void> {
  const columns: Partial<VisitorRow> = {};
  if (fields.name && !visitor.name) columns.name = fields.name;
  if (fields.email && !visitor.email) columns.email = fields.email;
  if (!Object.keys(columns).length) return;
  await scoped(ctx, 'webchat_visitors').where('id', visitor.id).update(columns);
  Object.assign(visitor, columns);
}

/** Runs the bot on the visitor's text (or the opening, text null); hands off or ends as the flow says. */
async function runBot(ctx: Ctx, row: ConversationRow, visitor: VisitorRow, widget: WidgetRow, text: string | null): Promise<ConversationRow> {
  const turn = await botTurn(ctx, { flowId: widget.bot_flow_id ?? '', channel: 'webchat', conversationKey: row.id, text, conversationId: row.id });
  if (!row.bot_session_id) row = await update(ctx, row.id, { bot_session_id: turn.session.id });
  await adoptFields(ctx, visitor, turn.fields);
  await sayBotReplies(ctx, row.id, widget, turn.replies);
  if (turn.outcome === 'handed_off') return handToPeople(ctx, row, visitor, widget, text);
  if (turn.outcome === 'completed') return finish(ctx, row);
  return row;
}

/** Ends a conversation: stamps it, ends a waiting bot session, resolves its ticket, tells both sides. */
async function finish(ctx: Ctx, row: ConversationRow): Promise<ConversationRow> {
  if (row.bot_session_id) await endSession(ctx, row.bot_session_id, 'completed');
  const ended = await update(ctx, row.id, { status: 'ended', ended_at: ctx.now });
  if (ended.ticket_id) {
    const ticket = await Ticket.findIn(ctx, ended.ticket_id);
    const resolved = await Status.scoped(ctx).findOne({ key: 'resolved' });
    const current = ticket ? await Status.findIn(ctx, ticket.status_id) : undefined;
    if (ticket && resolved && current && current.category !== 'resolved' && current.category !== 'closed') {
      await applyTicketChanges(ctx, ticket, { status_id: resolved.id });
    }
  }
  await announce(ctx, ended);
  await emitChatEvent(ctx, 'visitor', 'ended', row.id, { conversation_id: row.id, ended_at: toRfc3339(ctx.now) });
  return ended;
}

/** A new conversation from a visitor (the visitor row already exists). */
export async function openConversation(ctx: Ctx, visitor: VisitorRow, widget: WidgetRow, message: string | null): Promise<ConversationRow> {
  const flow = widget.bot_flow_id ? await findFlow(ctx, widget.bot_flow_id) : undefined;
  const [created] = await ctx.trx('webchat_conversations').insert({
    tenant_id: ctx.tenantId, id: uuidv7(ctx.now.getTime()), widget_id: widget.id, visitor_id: visitor.id,
    status: flow?.active ? 'bot' : 'waiting', started_at: ctx.now, last_message_at: ctx.now,
  }).returning('*') as ConversationRow[];
  let row = created!;
  await announce(ctx, row, 'conversation.created');
  if (widget.greeting.trim()) await postLine(ctx, row.id, 'bot', widget.name, widget.greeting);
  if (message?.trim()) await postLine(ctx, row.id, 'visitor', visitorLabel(visitor), message.trim());
  if (row.status === 'bot') row = await runBot(ctx, row, visitor, widget, message?.trim() || null);
  else row = await handToPeople(ctx, row, visitor, widget, message);
  return row;
}

/** The visitor writes: to the bot while it talks, else onto the ticket. */
export async function visitorSays(ctx: Ctx, visitor: VisitorRow, widget: WidgetRow, conversationId: string, text: string): Promise<ChatMessage> {
  let row = await loadConversation(ctx, conversationId, true);
  if (row.status === 'ended') throw errors.conflict('This conversation has ended; start a new one', { reason: 'conversation_ended' });
  const line = await postLine(ctx, row.id, 'visitor', visitorLabel(visitor), text.trim());
  if (row.status === 'bot') {
    row = await runBot(ctx, row, visitor, widget, text.trim());
  } else if (row.ticket_id) {
    await addMessage(ctx, row.ticket_id, {
      body: text.trim(), channel: 'webchat', author: { id: visitor.user_id, name: visitorLabel(visitor), isAgent: false },
    });
  }
  return line;
}

// ---- The console ----------------------------------------------------------------------------

function agentOf(ctx: Ctx): { id: string; name: string } {
  if (!ctx.actor.userId) throw errors.forbidden('Only a user (or a key acting for one) can take conversations');
  return { id: ctx.actor.userId, name: ctx.actor.name };
}

async function agentName(ctx: Ctx, id: string): Promise<string> {
  const user = await scoped<{ name: string }>(ctx, 'users').where('id', id).first('name');
  return user?.name ?? '';
}

async function lockedBy(ctx: Ctx, row: ConversationRow): Promise<never> {
  const holder = { id: row.assigned_agent_id!, name: await agentName(ctx, row.assigned_agent_id!) };
  // A claim lasts until release or end: unlike a ticket's composer lock it has no expiry.
  throw new AppError('reply_locked', `${holder.name} has claimed this conversation`, { locked_by: holder, expires_at: null });
}

/**
 * Claims a waiting (or one's own) conversation: the reply lock of web chat. Concurrent claims
 * serialise on the conversation row; the first wins, the others get `409 reply_locked` naming it.
 */
export async function claimConversation(ctx: Ctx, id: string): Promise<{ conversation_id: string; claimed_by: { id: string; name: string } }> {
  const agent = agentOf(ctx);
  const row = await loadConversation(ctx, id, true);
  if (row.status === 'ended') throw errors.conflict('This conversation has ended', { reason: 'conversation_ended' });
  if (row.assigned_agent_id && row.assigned_agent_id !== agent.id) return lockedBy(ctx, row);
  if (row.status === 'bot') throw errors.conflict('The bot is still talking with this visitor; it can be claimed once it hands off', { reason: 'with_bot' });
  if (row.assigned_agent_id === agent.id) return { conversation_id: id, claimed_by: agent };
  const claimed = await update(ctx, id, { status: 'active', assigned_agent_id: agent.id, offered_to_id: null });
  if (claimed.ticket_id) {
    const ticket = await Ticket.findIn(ctx, claimed.ticket_id);
    if (ticket && ticket.assigned_agent_id !== agent.id) await applyTicketChanges(ctx, ticket, { assigned_agent_id: agent.id });
  }
  await announce(ctx, claimed);
  await emitChatEvent(ctx, 'visitor', 'agent_joined', id, { conversation_id: id, agent: { id: agent.id, name: agent.name } });
  return { conversation_id: id, claimed_by: agent };
}

function mayOverride(ctx: Ctx): boolean {
  return ctx.actor.role === 'admin' || ctx.actor.scopes.includes('admin');
}

/** Gives a claimed conversation back to the queue (its claimer or an admin). */
export async function releaseConversation(ctx: Ctx, id: string): Promise<Conversation> {
  const agent = agentOf(ctx);
  const row = await loadConversation(ctx, id, true);
  if (row.status !== 'active') throw errors.conflict(`Only an active conversation can be released (this one is ${row.status})`, { reason: 'not_active' });
  if (row.assigned_agent_id !== agent.id && !mayOverride(ctx)) return lockedBy(ctx, row);
  const released = await update(ctx, id, { status: 'waiting', assigned_agent_id: null, offered_to_id: null });
  if (released.ticket_id) {
    const ticket = await Ticket.findIn(ctx, released.ticket_id);
    if (ticket?.assigned_agent_id) await applyTicketChanges(ctx, ticket, { assigned_agent_id: null });
  }
  await announce(ctx, released);
  await offerWaiting(ctx, { except: row.assigned_agent_id });
  return conversationOut(ctx, await loadConversation(ctx, id));
}

/** Ends a conversation (its claimer, an admin, or anyone while nobody has claimed it). */
export async function endConversation(ctx: Ctx, id: string): Promise<Conversation> {
  const agent = agentOf(ctx);
  const row = await loadConversation(ctx, id, true);
  if (row.status === 'ended') return conversationOut(ctx, row);
  if (row.assigned_agent_id && row.assigned_agent_id !== agent.id && !mayOverride(ctx)) return lockedBy(ctx, row);
  const ended = await finish(ctx, row);
  // A freed slot may take the next waiting conversation.
  await offerWaiting(ctx);
  return conversationOut(ctx, ended);
}

/** An agent's answer: only by the claimer (`409 reply_locked` otherwise), onto the ticket and to the visitor. */
export async function replyToConversation(ctx: Ctx, id: string, text: string): Promise<ChatMessage> {
  const agent = agentOf(ctx);
  const row = await loadConversation(ctx, id, true);
  if (row.status === 'ended') throw errors.conflict('This conversation has ended', { reason: 'conversation_ended' });
  if (row.assigned_agent_id && row.assigned_agent_id !== agent.id) return lockedBy(ctx, row);
  if (row.assigned_agent_id !== agent.id || !row.ticket_id) {
    throw errors.conflict('Claim the conversation before replying', { reason: 'not_claimed' });
  }
  await addMessage(ctx, row.ticket_id, { body: text.trim(), channel: 'webchat' });
  return postLine(ctx, id, 'agent', agent.name, text.trim());
}
