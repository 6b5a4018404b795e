import type { Deps } from '../core/context.js';
import { SYSTEM_ACTOR } from '../core/context.js';
import { hmacBase64url, safeEqual } from '../core/crypto.js';
import { isAppError } from '../core/errors.js';
import { inTransaction } from '../db/transaction.js';
import { scoped } from '../db/tenant-scope.js';
import { getCsatSettings, DEFAULT_QUESTION } from './settings.js';
import { surveyLanguage } from './i18n.js';
import { renderSurveyPage } from './page.js';
import { brandingFor } from '../branding/service.js';
import { resolveSurveyToken, submitRating, surveyUrl } from './surveys.js';
import type { CsatAnswer, CsatSubmit, SurveyForm } from './schemas.js';
import type { CsatSurvey } from './models.js';
import type { Ctx } from '../core/context.js';

/**
 * The customer's side of a survey: the token is the credential and decides the tenant, so each
 * call resolves it first and then works in that tenant's transaction, as the system (the rating is
 * attributed to the ticket's requester in the event).
 *
 * CSRF: the page's form carries a form token, an HMAC of the survey id under a key of its own,
 * so only a page this service rendered can post the form (and a cross-site request the browser
 * marks `Sec-Fetch-Site: cross-site` is refused before that, in the route).
 */
function formTokenFor(deps: Deps, surveyId: string): string {
  return hmacBase64url(deps.box.derive('helpdesk:csat-form'), surveyId);
}

interface Input { token: string; now: Date; requestId: string | null; ip: string | null }

async function inSurveyTenant<T>(deps: Deps, input: Input, fn: (ctx: Ctx, survey: CsatSurvey) => Promise<T>): Promise<T> {
  const { tenantId, survey } = await resolveSurveyToken(deps, input.token, input.now);
  return inTransaction(deps, { tenantId, actor: SYSTEM_ACTOR, now: input.now, requestId: input.requestId, ip: input.ip }, (ctx) => fn(ctx, survey));
}

/** POST /api/v1/csat/<token>. */
export function submitByToken(deps: Deps, input: Input, body: CsatSubmit): Promise<CsatAnswer> {
  return inSurveyTenant(deps, input, (ctx, survey) => submitRating(ctx, survey.id, body));
}

async function pageOf(ctx: Ctx, survey: CsatSurvey, token: string, notice: 'thanks' | 'invalid' | null): Promise<string> {
  const settings = await getCsatSettings(ctx);
  const ticket = await scoped(ctx, 'tickets').where('tickets.id', survey.ticket_id)
    .join('users', function () { this.on('users.tenant_id', 'tickets.tenant_id').andOn('users.id', 'tickets.requester_id'); })
    .first('tickets.ticket_number', 'tickets.subject', 'users.locale');
  const current = await scoped(ctx, 'csat_surveys').where('id', survey.id).first('score', 'comment', 'reason');
  const { lang, strings } = surveyLanguage(ticket?.locale);
  return renderSurveyPage({
    lang,
    strings,
    ticketNumber: Number(ticket?.ticket_number ?? 0),
    subject: ticket?.subject ?? '',
    question: settings.question === DEFAULT_QUESTION ? strings.defaultQuestion : settings.question,
    reasons: settings.reasons,
    commentEnabled: settings.comment_enabled,
    action: new URL(surveyUrl(ctx.deps, token)).pathname,
    formToken: formTokenFor(ctx.deps, survey.id),
    brand: await brandingFor(ctx.trx, ctx.tenantId),
    current: current?.score ? { score: current.score, comment: current.comment, reason: current.reason } : null,
    notice,
  });
}

/** GET {site_url}/csat/<token>[?score=N]: the page; with a score, records it first (one click from the mail). */
export function surveyPage(deps: Deps, input: Input, score: number | undefined): Promise<string> {
  return inSurveyTenant(deps, input, async (ctx, survey) => {
    if (score !== undefined) await submitRating(ctx, survey.id, { score });
    return pageOf(ctx, survey, input.token, score !== undefined ? 'thanks' : null);
  });
}

/**
 * POST {site_url}/csat/<token> from the page's form. A wrong form token or a reason that is not
 * offered re-renders the page with a notice (status 422), never a JSON error: a person is reading.
 */
export function submitSurveyForm(deps: Deps, input: Input, form: SurveyForm): Promise<{ status: number; html: string }> {
  return inSurveyTenant(deps, input, async (ctx, survey) => {
    if (!safeEqual(form.form_token, formTokenFor(deps, survey.id))) {
      return { status: 403, html: await pageOf(ctx, survey, input.token, 'invalid') };
    }
    try {
      await submitRating(ctx, survey.id, { score: Number(form.score), comment: form.comment ?? null, reason: form.reason || null });
    } catch (error) {
      if (isAppError(error) && error.code === 'validation_failed') return { status: 422, html: await pageOf(ctx, survey, input.token, 'invalid') };
      throw error;
    }
    return { status: 200, html: await pageOf(ctx, survey, input.token, 'thanks') };
  });
}
