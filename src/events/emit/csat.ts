import type { Ctx } from '../../core/context.js';
import { recordEvent } from '../record.js';

/** `ticket.csat_rating_submitted`: the requester rated the ticket through the survey link. */
export interface CsatRatingPayload {
  ticket_id: string;
  score: number;
  comment: string | null;
  reason: string | null;
  submitted_at: string;
}

/** The requester is the actor: the customer rates through their link, not as a signed-in user. */
export async function emitCsatRatingSubmitted(ctx: Ctx, payload: CsatRatingPayload, requester: { id: string | null; name: string | null }): Promise<void> {
  await recordEvent(ctx, {
    type: 'ticket.csat_rating_submitted', subjectType: 'ticket', ticketId: payload.ticket_id,
    to: String(payload.score), actor: requester, data: { ...payload },
  });
}
