import type { Ctx } from '../../core/context.js';
import { recordEvent } from '../record.js';

/** `ticket.csat_rating_submitted`: the requester rated the ticket (the survey token is the actor). */
export interface CsatRatingPayload {
  ticket_id: string;
  score: 1 | 2 | 3 | 4 | 5;
  comment: string | null;
  reason: string | null;
}

export async function emitCsatRatingSubmitted(ctx: Ctx, payload: CsatRatingPayload, requester: { id: string; name: string } | null): Promise<void> {
  await recordEvent(ctx, {
    type: 'ticket.csat_rating_submitted', subjectType: 'ticket', ticketId: payload.ticket_id,
    to: String(payload.score), actor: requester ? { id: requester.id, name: requester.name } : undefined, data: { ...payload },
  });
}
