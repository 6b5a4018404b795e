import type { FastifyReply, FastifyRequest } from 'fastify';
import { route, type RouteDef } from '../route.js';
import { isAppError } from '../../src/core/errors.js';
import { ListOf } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import { createWebform, deleteWebform, formPage, getWebform, issueFormToken, listWebforms, submitWebform } from '../../src/webforms/service.js';
import { WebformCreate, WebformListQuery, WebformOut, WebformSubmission, WebformSubmitted, WebformToken } from '../../src/webforms/schemas.js';

/** Web forms (SPEC "Channels and web forms", CONTRACT §17). */
const tags = ['webforms'];

function pageHeaders(reply: FastifyReply): void {
  reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
  // No frame-ancestors: the form is made to be embedded (embed_snippet).
  reply.header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'");
}

const fromBrowser = (request: FastifyRequest) => String(request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');

export const webformsRoutes = [
  route({
    method: 'POST', url: '/webforms', access: { kind: 'token', scope: 'channel_sources:write', roles: ['admin'] }, summary: 'Define a web form (exactly one email field: the requester)', tags,
    schema: { body: WebformCreate, response: { 201: WebformOut } }, status: 201,
    example: { body: { title: 'Contact us', fields: [{ name: 'name', type: 'text', required: true }, { name: 'email', type: 'email', required: true }, { name: 'message', type: 'textarea', required: true }] } },
    handler: (ctx, { body }) => createWebform(ctx, body),
  }),
  route({
    method: 'GET', url: '/webforms', access: { kind: 'token', scope: 'channel_sources:read' }, summary: 'List web forms', tags,
    schema: { querystring: WebformListQuery, response: { 200: ListOf(WebformOut) } },
    handler: (ctx, { query }) => listWebforms(ctx, query),
  }),
  route({
    method: 'GET', url: '/webforms/:id', access: { kind: 'token', scope: 'channel_sources:read' }, summary: 'A web form', tags,
    schema: { params: IdParams, response: { 200: WebformOut } },
    handler: (ctx, { params }) => getWebform(ctx, params.id),
  }),
  route({
    method: 'DELETE', url: '/webforms/:id', access: { kind: 'token', scope: 'channel_sources:delete', roles: ['admin'] }, summary: 'Delete a web form (its tickets stay)', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteWebform(ctx, params.id),
  }),
  route({
    method: 'GET', url: '/webforms/:id/token', access: { kind: 'public' }, summary: 'A fresh form token, for a form built outside the served page (valid 24 hours)', tags,
    transaction: false,
    schema: { params: IdParams, response: { 200: WebformToken } },
    handler: (ctx, { params }) => issueFormToken(ctx.deps, params.id, ctx.now),
  }),
  route({
    method: 'GET', url: '/forms/:id', root: true, page: true, access: { kind: 'public' }, operationId: 'webforms.page',
    summary: 'The web form as an HTML page (with its form token and honeypot)', tags, transaction: false,
    schema: { params: IdParams },
    handler: async (ctx, { params, reply }) => {
      const html = await formPage(ctx.deps, params.id, ctx.now);
      pageHeaders(reply);
      return html;
    },
  }),
];

/** The submission takes JSON or the page's form post (app.ts gives form routes both parsers). */
export const webformFormRoutes = [
  route({
    method: 'POST', url: '/webforms/:id/submissions', access: { kind: 'public' }, summary: 'Submit a web form: a ticket of channel webform', tags,
    description: 'Public: the form id decides the tenant. The body holds the form\'s fields by name, `form_token` from the page (or `GET /webforms/{id}/token`) and the honeypot `homepage`, which must stay empty. Rate-limited per form and client address (`429` with Retry-After). A form post from the page (application/x-www-form-urlencoded) is answered with the page and a notice instead of JSON.',
    transaction: false, errors: ['forbidden'],
    schema: { params: IdParams, body: WebformSubmission, response: { 201: WebformSubmitted } }, status: 201,
    example: { body: { name: 'Ada', email: 'ada@example.com', message: 'Hello', form_token: 'from-the-page', homepage: '' } },
    handler: async (ctx, { params, body, request, reply }) => {
      const input = { ip: ctx.ip, now: ctx.now, requestId: ctx.requestId };
      if (!fromBrowser(request)) return submitWebform(ctx.deps, params.id, body, input);
      let status = 201;
      let notice: { kind: 'thanks' | 'invalid'; text: string };
      try {
        const done = await submitWebform(ctx.deps, params.id, body, input);
        notice = { kind: 'thanks', text: `Thank you: we received your message (ticket #${done.ticket_number}).` };
      } catch (error) {
        if (!isAppError(error) || error.code === 'resource_not_found') throw error;
        status = error.status;
        const details = Array.isArray(error.details) ? (error.details as Array<{ field: string; message: string }>).map((d) => `${d.field} ${d.message}`).join('; ') : '';
        notice = { kind: 'invalid', text: details ? `Please check: ${details}` : error.message };
        if (error.headers) reply.headers(error.headers);
      }
      const html = await formPage(ctx.deps, params.id, ctx.now, notice);
      pageHeaders(reply);
      return reply.code(status).send(html);
    },
  }),
] as RouteDef[];
