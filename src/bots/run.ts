import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { uuidv7 } from '../core/ids.js';
import { toRfc3339 } from '../core/clock.js';
import { scoped } from '../db/tenant-scope.js';
import { findFlow, sessionOut, type SessionRow } from './service.js';
import type { BotNode, BotSession, TranscriptEntry } from './schemas.js';

/**
 * The bot interpreter, channel-agnostic (CONTRACT §16): one turn of a flow for one conversation of
 * any channel. Web chat calls it; a messaging channel adapter calls it the same way with its own
 * `channel` and conversation key. It starts a session when the conversation has no active one,
 * or advances the active one with the visitor's text, and answers what the bot says back.
 *
 *   botTurn(ctx, { flowId, channel, conversationKey, text, conversationId? }) → BotTurn
 *
 * Node semantics: `message` says its text and goes to `next`; `question` says its text with
 * numbered choices and waits (a label, case-insensitive, or its 1-based number picks the choice;
 * anything else repeats the question); `collect` asks and waits, stores the answer in `field`
 * (`email` must look like an address, else it asks again) and goes to `next`; `handoff` says its
 * text (if any) and passes the conversation to people (`handed_off`); `end` says its text and ends
 * (`completed`). A flow that has been deleted or deactivated hands the conversation off.
 * Everything runs in ctx's transaction; the session row is locked for the turn, so two messages
 * of one conversation are interpreted one after the other.
 */
export interface BotTurnInput {
  flowId: string;
  /** e.g. `webchat`, `messaging_a`: sessions carry it. */
  channel: string;
  /** Identifies the conversation within the channel (web chat: the conversation id). */
  conversationKey: string;
  /** The visitor's message; null to start the flow without one (a widget opening). */
  text: string | null;
  /** Stored on the session for the console (web chat conversations). */
  conversationId?: string | null;
}

export interface BotReply {
  node_id: string;
  text: string;
  /** The choices of a question, in order (a channel may render them as buttons). */
  choices: string[] | null;
}

export interface BotTurn {
  session: BotSession;
  replies: BotReply[];
  /** `active`: waiting for the visitor; `handed_off`: pass to people; `completed`: the bot ended it. */
  outcome: 'active' | 'handed_off' | 'completed';
  /** What `collect` nodes have stored so far. */
  fields: Record<string, string>;
}

/** At most this many nodes per turn (validation forbids message-only loops; this is a backstop). */
const MAX_STEPS = 100;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function replyOf(node: BotNode): BotReply {
  const choices = node.type === 'question' ? (node.choices ?? []).map((c) => c.label) : null;
  const text = choices ? [node.text, ...choices.map((label, i) => `${i + 1}. ${label}`)].join('\n') : node.text;
  return { node_id: node.id, text, choices };
}

/** The choice a text picks: its label (case-insensitive, trimmed) or its 1-based number. */
export function pickChoice(node: BotNode, text: string): string | null {
  const said = text.trim().toLowerCase();
  const choices = node.choices ?? [];
  const byLabel = choices.find((c) => c.label.trim().toLowerCase() === said);
  if (byLabel) return byLabel.target_node;
  if (/^[0-9]{1,3}$/.test(said)) return choices[Number(said) - 1]?.target_node ?? null;
  return null;
}

export async function botTurn(ctx: Ctx, input: BotTurnInput): Promise<BotTurn> {
  let session = await scoped<SessionRow>(ctx, 'bot_sessions')
    .where({ channel: input.channel, conversation_key: input.conversationKey, status: 'active' }).forUpdate().first();
  const flow = await findFlow(ctx, session?.flow_id ?? input.flowId);
  const transcript: TranscriptEntry[] = [...(session?.transcript ?? [])];
  const fields: Record<string, string> = { ...(session?.fields ?? {}) };
  const at = toRfc3339(ctx.now)!;
  const replies: BotReply[] = [];
  const say = (node: BotNode, reply = replyOf(node)) => {
    if (!reply.text.trim()) return;
    replies.push(reply);
    transcript.push({ at, from: 'bot', node_id: node.id, text: reply.text });
  };

  if (!session) {
    if (!flow) throw errors.notFound('bot flow', input.flowId);
    const [created] = await ctx.trx('bot_sessions').insert({
      tenant_id: ctx.tenantId, id: uuidv7(ctx.now.getTime()), flow_id: flow.id, channel: input.channel,
      conversation_key: input.conversationKey, conversation_id: input.conversationId ?? null, status: 'active',
      current_node: null, fields: '{}', transcript: '[]', started_at: ctx.now, last_activity_at: ctx.now,
    }).returning('*') as SessionRow[];
    session = created!;
  }
  if (input.text !== null) transcript.push({ at, from: 'visitor', node_id: session.current_node, text: input.text });

  const nodes = new Map((flow?.nodes ?? []).map((n) => [n.id, n]));
  let status: BotTurn['outcome'] = 'active';
  // Where to go now: the start for a new session; else the answer to the node it waits on.
  let next: string | null = null;
  const waiting = session.current_node ? nodes.get(session.current_node) : undefined;
  if (!flow || !flow.active || (session.current_node && !waiting)) {
    status = 'handed_off';
  } else if (!waiting) {
    next = flow.start_node;
  } else if (input.text === null) {
    next = null; // nothing said: keep waiting
  } else if (waiting.type === 'question') {
    next = pickChoice(waiting, input.text);
    if (!next) say(waiting);
  } else if (waiting.type === 'collect') {
    const answer = input.text.trim();
    if (waiting.field === 'email' && !EMAIL.test(answer)) {
      say(waiting, { node_id: waiting.id, text: `That does not look like an email address. ${waiting.text}`, choices: null });
    } else if (answer) {
      fields[waiting.field!] = waiting.field === 'email' ? answer.toLowerCase() : answer.slice(0, 200);
      next = waiting.next ?? null;
    } else {
      say(waiting);
    }
  }

  let current = session.current_node;
  for (let steps = 0; next && status === 'active'; steps++) {
    const node = nodes.get(next);
    if (!node || steps >= MAX_STEPS) {
      status = 'handed_off';
      break;
    }
    current = node.id;
    say(node);
    if (node.type === 'message') next = node.next ?? null;
    else if (node.type === 'handoff') status = 'handed_off';
    else if (node.type === 'end') status = 'completed';
    else next = null; // question, collect: wait for the visitor
  }

  const ended = status !== 'active';
  const [row] = await scoped(ctx, 'bot_sessions').where('id', session.id).update({
    status, current_node: current, fields: JSON.stringify(fields), transcript: JSON.stringify(transcript),
    last_activity_at: ctx.now, ended_at: ended ? ctx.now : null,
    ...(input.conversationId && !session.conversation_id ? { conversation_id: input.conversationId } : {}),
  }).returning('*') as SessionRow[];
  return { session: sessionOut(row!), replies, outcome: status, fields };
}

/** The full transcript of a session (for a ticket's first message when the bot hands off). */
export async function sessionTranscript(ctx: Ctx, sessionId: string): Promise<TranscriptEntry[]> {
  const row = await scoped<SessionRow>(ctx, 'bot_sessions').where('id', sessionId).first();
  return row?.transcript ?? [];
}

/** Ends a session that waits on the visitor (the conversation ended elsewhere); idempotent. */
export async function endSession(ctx: Ctx, sessionId: string, status: 'completed' | 'abandoned'): Promise<boolean> {
  const changed = await scoped(ctx, 'bot_sessions').where({ id: sessionId, status: 'active' })
    .update({ status, ended_at: ctx.now, last_activity_at: ctx.now });
  return changed > 0;
}
