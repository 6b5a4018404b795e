import type { Ctx } from '../core/context.js';
import { scoped } from '../db/tenant-scope.js';
import type { ChannelBotAnswer, ChannelBotResponder } from '../channels/inbound.js';
import { botTurn, sessionTranscript } from './run.js';
import { findFlow } from './service.js';

/**
 * Bot flows on messaging and social channels (CONTRACT §16, §17: "an active bot flow of the source
 * answers first"), registered in src/wiring.ts. The conversation is the channel identity (one
 * customer on one source). While the identity's session is active the flow answers every message;
 * a new session starts only when the source names an active flow. The bot's lines go back through
 * the channel (`say`) and are kept in the session's transcript. On hand-off the transcript becomes
 * the ticket's message (as web chat does), and later messages go to people; after `completed` the
 * next message starts the flow again.
 */
export const channelBotResponder: ChannelBotResponder = async (ctx: Ctx, turn): Promise<ChannelBotAnswer> => {
  const active = await scoped(ctx, 'bot_sessions').where({ channel: turn.channel, conversation_key: turn.identityId, status: 'active' }).first('id');
  if (!active) {
    if (!turn.flowId) return false;
    const flow = await findFlow(ctx, turn.flowId);
    if (!flow?.active) return false;
  }
  const result = await botTurn(ctx, { flowId: turn.flowId ?? '', channel: turn.channel, conversationKey: turn.identityId, text: turn.text });
  turn.say(result.replies.map((reply) => reply.text));
  if (result.outcome !== 'handed_off') return true;
  const user = await scoped<{ name: string }>(ctx, 'users').where('id', turn.userId).first('name');
  const label = user?.name?.trim() || 'Customer';
  const transcript = await sessionTranscript(ctx, result.session.id);
  const lines = transcript.map((entry) => `${entry.from === 'bot' ? 'Bot' : label}: ${entry.text}`);
  const first = transcript.find((entry) => entry.from === 'visitor')?.text;
  return { handoff: lines.length ? lines.join('\n') : turn.text, ...(first ? { subject: first } : {}) };
};
