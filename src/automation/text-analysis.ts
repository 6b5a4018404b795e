import { Type, type Static } from '@sinclair/typebox';
import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { Nullable } from '../core/schema-types.js';
import { Message } from '../tickets/models.js';
import { loadVisibleTicket } from '../tickets/visibility.js';
import { suggestSubject } from './text/subject.js';
import { analyzeSentiment } from './text/sentiment.js';

/**
 * POST /tickets/{id}/subject/suggest and /sentiment/analyze: local text analysis (src/automation/
 * text/, method and accuracy in docs/api.md). Both only read; the agent decides what to do with
 * the answer (PATCH the subject, raise the priority), so they record no event.
 */
export const TextAnalysisInput = Type.Object({
  message_id: Type.Optional(Type.String({ format: 'uuid', description: 'Analyse this message of the ticket instead of the default one' })),
}, { $id: 'TextAnalysisInput', additionalProperties: false });
export type TextAnalysisInput = Static<typeof TextAnalysisInput>;

const Driver = Type.Object({ word: Type.String(), weight: Type.Number() });
export const SubjectSuggestionSchema = Type.Object({
  ticket_id: Type.String(), message_id: Nullable(Type.String()), subject: Nullable(Type.String()),
  sentence: Nullable(Type.String()), keywords: Type.Array(Type.String()),
}, { $id: 'SubjectSuggestion' });
export const SentimentSchema = Type.Object({
  ticket_id: Type.String(), message_id: Nullable(Type.String()),
  sentiment: Type.String({ enum: ['positive', 'neutral', 'negative'] }), score: Type.Number(),
  urgency: Type.Number(), urgency_level: Type.String({ enum: ['low', 'medium', 'high'] }),
  drivers: Type.Object({ sentiment: Type.Array(Driver), urgency: Type.Array(Driver) }),
}, { $id: 'SentimentAnalysis' });

/** The named message (public, of this ticket), else the default `pick` of the ticket's messages. */
async function messageFor(ctx: Ctx, ticketId: string, input: TextAnalysisInput | undefined, latestFromCustomer: boolean): Promise<Message | undefined> {
  const ticket = await loadVisibleTicket(ctx, ticketId);
  const base = () => Message.scoped(ctx).where('messages.ticket_id', ticket.id).where('messages.is_private', false);
  if (input?.message_id) {
    const named = await base().findOne({ 'messages.id': input.message_id });
    if (!named) throw errors.invalid('message_id', 'is not a public message of this ticket');
    return named;
  }
  if (latestFromCustomer) {
    const latest = await base().where('messages.is_agent', false).orderBy('messages.created_at', 'desc').orderBy('messages.id', 'desc').first();
    if (latest) return latest;
  }
  return base().orderBy('messages.created_at').orderBy('messages.id').first();
}

/** From the first message (what the customer asked), unless another is named. */
export async function suggestTicketSubject(ctx: Ctx, ticketId: string, input?: TextAnalysisInput) {
  const message = await messageFor(ctx, ticketId, input, false);
  const suggestion = suggestSubject(message?.body ?? '');
  return { ticket_id: ticketId, message_id: message?.id ?? null, ...suggestion };
}

/** From the customer's latest public message (how they feel now), else the first message. */
export async function analyzeTicketSentiment(ctx: Ctx, ticketId: string, input?: TextAnalysisInput) {
  const message = await messageFor(ctx, ticketId, input, true);
  return { ticket_id: ticketId, message_id: message?.id ?? null, ...analyzeSentiment(message?.body ?? '') };
}
