import { randomBytes } from 'node:crypto';
import type { Ctx, Deps } from '../core/context.js';
import { errors } from '../core/errors.js';
import { sha256Hex } from '../core/crypto.js';
import { toRfc3339 } from '../core/clock.js';
import { scoped } from '../db/tenant-scope.js';
import { emitCsatRatingSubmitted } from '../events/emit/csat.js';
import type { EventRecord } from '../events/models.js';
import { getCsatSettings } from './settings.js';
import { CsatSurvey } from './models.js';
import type { CsatAnswer, CsatSubmit } from './schemas.js';

/**
 * Survey tokens and ratings (CONTRACT §14). A ticket entering the tenant's trigger category gets a
 * survey with a fresh token; the token is the customer's only credential, so it carries 256 bits
 * of randomness and is stored as a hash (for the lookup) and encrypted (so `csatUrlFor` can print
 * the link into the resolved mail later). Tokens expire 30 days after they were issued; an expired
 * token answers like an unknown one.
 */
export const SURVEY_LIFETIME_MS = 30 * 24 * 3600 * 1000;
const TOKEN_PREFIX = 'cs_';

function newToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

async function categoryOfStatus(ctx: Ctx, statusId: string | null | undefined): Promise<string | null> {
  if (!statusId) return null;
  const row = await scoped(ctx, 'statuses').where('id', statusId).first('category');
  return row?.category ?? null;
}

async function ticketStatusCategory(ctx: Ctx, ticketId: string): Promise<string | null> {
  const row = await scoped(ctx, 'tickets').where('tickets.id', ticketId)
    .join('statuses', function () { this.on('statuses.tenant_id', 'tickets.tenant_id').andOn('statuses.id', 'tickets.status_id'); })
    .first('statuses.category');
  return row?.category ?? null;
}

/** The survey issued for the ticket's current stay in the trigger category, if any. */
async function currentSurvey(ctx: Ctx, ticketId: string): Promise<CsatSurvey | undefined> {
  return CsatSurvey.scoped(ctx).where({ ticket_id: ticketId }).where('expires_at', '>', ctx.now)
    .orderBy('created_at', 'desc').orderBy('id', 'desc').first();
}

async function issueSurvey(ctx: Ctx, ticketId: string): Promise<CsatSurvey> {
  const token = newToken();
  return CsatSurvey.insertIn(ctx, {
    ticket_id: ticketId,
    token_hash: sha256Hex(token),
    token_encrypted: ctx.deps.box.encrypt(token),
    created_at: ctx.now,
    expires_at: new Date(ctx.now.getTime() + SURVEY_LIFETIME_MS),
  });
}

/**
 * Event consumer of `ticket.status_changed` (registered in src/wiring.ts): when CSAT is on and the
 * ticket's new status is of the trigger category (and the old one was not), a new survey is
 * issued in the same transaction. Re-entering the category later (reopened, resolved again)
 * issues a new survey, so each resolution can be rated.
 */
export async function onStatusChanged(ctx: Ctx, event: EventRecord): Promise<void> {
  if (event.type !== 'ticket.status_changed' || !event.ticket_id) return;
  const settings = await getCsatSettings(ctx);
  if (!settings.enabled) return;
  const data = event.data as { from_id?: string; to_id?: string };
  const [from, to] = await Promise.all([categoryOfStatus(ctx, data.from_id), categoryOfStatus(ctx, data.to_id)]);
  if (to !== settings.trigger || from === settings.trigger) return;
  await issueSurvey(ctx, event.ticket_id);
}

/**
 * `{{csat.url}}` of the resolved mail: `{site_url}/csat/<token>` of the ticket's current survey, or
 * null when CSAT is off or the ticket has no survey. When the ticket sits in the trigger category
 * but its survey has not been issued yet (a consumer ordering the mail before this one), it is
 * issued here, so the mail never misses its link.
 */
export async function csatUrlFor(ctx: Ctx, ticketId: string): Promise<string | null> {
  const settings = await getCsatSettings(ctx);
  if (!settings.enabled) return null;
  let survey = await currentSurvey(ctx, ticketId);
  if (!survey) {
    if ((await ticketStatusCategory(ctx, ticketId)) !== settings.trigger) return null;
    survey = await issueSurvey(ctx, ticketId);
  }
  return surveyUrl(ctx.deps, ctx.deps.box.decrypt(survey.token_encrypted));
}

export function surveyUrl(deps: Deps, token: string): string {
  return `${deps.config.siteUrl}/csat/${encodeURIComponent(token)}`;
}

export interface ResolvedSurvey {
  tenantId: string;
  survey: CsatSurvey;
}

/**
 * The token decides the tenant (CONTRACT §3, token-in-path routes): a lookup by hash across all
 * tenants. Unknown, malformed and expired tokens all answer `404`, alike.
 */
export async function resolveSurveyToken(deps: Deps, token: string, now: Date): Promise<ResolvedSurvey> {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 100) throw errors.notFound('survey');
  const row = await deps.db('csat_surveys').where('token_hash', sha256Hex(token))
    .comment('cross-tenant: a survey token decides its tenant').first();
  if (!row || new Date(row.expires_at) <= now) throw errors.notFound('survey');
  return { tenantId: row.tenant_id, survey: CsatSurvey.fromJson(row, { skipValidation: true }) };
}

function answerOf(survey: CsatSurvey): CsatAnswer {
  return {
    ticket_id: survey.ticket_id,
    score: survey.score!,
    comment: survey.comment,
    reason: survey.reason,
    submitted_at: toRfc3339(survey.submitted_at)!,
  };
}

/**
 * Records a rating on the survey (a later one replaces the earlier), mirrors it onto the ticket's
 * `csat` and emits `ticket.csat_rating_submitted`. The comment is kept only when the tenant's
 * settings ask for one; a reason must be one of the configured reasons.
 */
export async function submitRating(ctx: Ctx, surveyId: string, input: CsatSubmit): Promise<CsatAnswer> {
  const survey = await CsatSurvey.scoped(ctx).where('id', surveyId).forUpdate().first();
  if (!survey || survey.expires_at <= ctx.now) throw errors.notFound('survey');
  const settings = await getCsatSettings(ctx);
  const reasonText = input.reason?.trim() || null;
  const reason = reasonText === null ? null : settings.reasons.find((r) => r.toLowerCase() === reasonText.toLowerCase());
  if (reason === undefined) {
    throw errors.invalid('reason', settings.reasons.length ? `must be one of: ${settings.reasons.join(', ')}` : 'no reasons are offered');
  }
  const comment = settings.comment_enabled ? input.comment?.trim() || null : null;

  const [updated] = await CsatSurvey.scoped(ctx).where('id', survey.id)
    .patch({ score: input.score, comment, reason, submitted_at: ctx.now } as never).returning('*') as unknown as CsatSurvey[];
  const answer = answerOf(updated!);
  await scoped(ctx, 'tickets').where('id', survey.ticket_id).update({
    csat: JSON.stringify({ score: answer.score, comment: answer.comment, reason: answer.reason, submitted_at: answer.submitted_at }),
  });
  await emitCsatRatingSubmitted(ctx, {
    ticket_id: survey.ticket_id, score: answer.score, comment: answer.comment, reason: answer.reason, submitted_at: answer.submitted_at,
  }, await requesterOf(ctx, survey.ticket_id));
  return answer;
}

async function requesterOf(ctx: Ctx, ticketId: string): Promise<{ id: string | null; name: string | null }> {
  const row = await scoped(ctx, 'tickets').where('tickets.id', ticketId)
    .join('users', function () { this.on('users.tenant_id', 'tickets.tenant_id').andOn('users.id', 'tickets.requester_id'); })
    .first('users.id', 'users.name');
  return { id: row?.id ?? null, name: row?.name ?? null };
}
