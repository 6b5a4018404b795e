import type { FastifyReply, FastifyRequest } from 'fastify';
import { ADMIN, route, type RouteDef } from '../route.js';
import type { Ctx } from '../../src/core/context.js';
import { errors, isAppError } from '../../src/core/errors.js';
import { getCsatSettings, updateCsatSettings } from '../../src/csat/settings.js';
import { submitByToken, submitSurveyForm, surveyPage } from '../../src/csat/public.js';
import { languageFromHeader, surveyLanguage } from '../../src/csat/i18n.js';
import { renderUnavailablePage } from '../../src/csat/page.js';
import { CsatAnswer, CsatSettings, CsatSettingsPatch, CsatSubmit, SurveyForm, SurveyPageQuery, TokenParams } from '../../src/csat/schemas.js';

/** CSAT (CONTRACT §14): the tenant's settings, and the customer's survey by its token. */
const tags = ['csat'];

function inputOf(ctx: Ctx, token: string) {
  return { token, now: ctx.now, requestId: ctx.requestId, ip: ctx.ip };
}

const wantsHtml = (request: FastifyRequest) => /text\/html/.test(String(request.headers.accept ?? ''));

/**
 * The survey page is read by people: an unknown or expired token gets a small HTML page (404) when
 * the client asks for HTML, the contract's JSON error otherwise.
 */
async function html(request: FastifyRequest, reply: FastifyReply, produce: () => Promise<{ status: number; html: string }>): Promise<string> {
  try {
    const page = await produce();
    reply.code(page.status).type('text/html; charset=utf-8').header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
    reply.header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
    return page.html;
  } catch (error) {
    if (!(isAppError(error) && error.code === 'resource_not_found' && wantsHtml(request))) throw error;
    const { lang, strings } = surveyLanguage(languageFromHeader(request.headers['accept-language']));
    reply.code(404).type('text/html; charset=utf-8').header('cache-control', 'no-store');
    return renderUnavailablePage(lang, strings);
  }
}

export const csatRoutes = [
  route({
    method: 'GET', url: '/csat/settings', access: { kind: 'token', scope: 'csat_settings:read', roles: ADMIN }, summary: 'CSAT survey settings', tags,
    schema: { response: { 200: CsatSettings } },
    handler: (ctx) => getCsatSettings(ctx),
  }),
  route({
    method: 'PATCH', url: '/csat/settings', access: { kind: 'token', scope: 'csat_settings:write', roles: ADMIN }, summary: 'Change the CSAT survey settings', tags,
    schema: { body: CsatSettingsPatch, response: { 200: CsatSettings } },
    example: { body: { enabled: true, trigger: 'resolved', question: 'How did we do?', comment_enabled: true, reasons: ['Fast answer', 'Friendly agent'] } },
    handler: (ctx, { body }) => updateCsatSettings(ctx, body),
  }),
  route({
    method: 'POST', url: '/csat/:token', access: { kind: 'public' }, operationId: 'csat.submit',
    summary: 'Rate a ticket with its survey token (the token is the credential; a later rating replaces the earlier)', tags,
    transaction: false,
    schema: { params: TokenParams, body: CsatSubmit, response: { 200: CsatAnswer } },
    example: { body: { score: 5, comment: 'Quick and friendly', reason: 'Fast answer' } },
    handler: (ctx, { params, body }) => submitByToken(ctx.deps, inputOf(ctx, params.token), body),
  }),
  route({
    method: 'GET', url: '/csat/:token', root: true, page: true, access: { kind: 'public' }, operationId: 'csat.page',
    summary: 'The survey page (HTML); ?score=N records N at once (one click from the mail)', tags,
    description: 'Answers text/html. An unknown or expired token is 404 (an HTML page when the client accepts text/html).',
    transaction: false,
    schema: { params: TokenParams, querystring: SurveyPageQuery },
    handler: (ctx, { params, query, request, reply }) =>
      html(request, reply, async () => ({ status: 200, html: await surveyPage(ctx.deps, inputOf(ctx, params.token), query.score) })),
  }),
];

/** Routes that take an HTML form (application/x-www-form-urlencoded); app.ts gives them the parser. */
export const csatFormRoutes = [
  route({
    method: 'POST', url: '/csat/:token', root: true, page: true, access: { kind: 'public' }, operationId: 'csat.page.submit',
    summary: 'The survey page\'s form post (application/x-www-form-urlencoded); answers the page (HTML)', tags,
    description: 'Carries the form token of the page it came from; a cross-site post (Sec-Fetch-Site: cross-site) is refused.',
    errors: ['forbidden'],
    transaction: false,
    schema: { params: TokenParams, body: SurveyForm },
    example: { body: { score: '4', comment: 'Thanks!', form_token: 'from-the-page' } },
    handler: (ctx, { params, body, request, reply }) => {
      if (request.headers['sec-fetch-site'] === 'cross-site') throw errors.forbidden('A survey is answered from its own page');
      return html(request, reply, () => submitSurveyForm(ctx.deps, inputOf(ctx, params.token), body));
    },
  }),
] as RouteDef[];
