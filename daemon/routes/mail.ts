import type { FastifyRequest } from 'fastify';
import { ADMIN, route } from '../route.js';
import { errors } from '../../src/core/errors.js';
import { getMailSettings, testImap, testSmtp, updateMailSettings } from '../../src/mail/settings.js';
import { receiveInboundForToken, INBOUND_MAX_BYTES } from '../../src/mail/inbound-route.js';
import { listTemplates, resetTemplate, updateTemplate } from '../../src/mail/templates.js';
import {
  InboundAnswer, InboundParams, MailSettingsIn, MailSettingsOut, NotificationTemplate, NotificationTemplateList, TemplateParams,
  TemplatePatch, TestAnswer, TestSmtpIn,
} from '../../src/mail/schemas.js';

/** The email channel (CONTRACT §7, §14): mail settings and their tests, inbound mail, notification templates. */
const tags = ['email'];
const write = { kind: 'token', scope: 'mail_settings:write' } as const;

export const mailRoutes = [
  route({
    method: 'GET', url: '/mail-settings', access: write, summary: 'The SMTP and IMAP settings (passwords masked) and the inbound URL', tags,
    schema: { response: { 200: MailSettingsOut } },
    handler: (ctx) => getMailSettings(ctx),
  }),
  route({
    method: 'POST', url: '/mail-settings', operationId: 'mailSettings.update', access: write, summary: 'Set the SMTP and/or IMAP settings', tags,
    schema: { body: MailSettingsIn, response: { 200: MailSettingsOut } },
    example: {
      body: {
        smtp: { host: 'smtp.example.com', port: 587, security: 'starttls', username: 'support@example.com', password: 'app-password', from_address: 'support@example.com', from_name: 'Example Support' },
        imap: { host: 'imap.example.com', port: 993, security: 'tls', username: 'support@example.com', password: 'app-password' },
      },
    },
    handler: (ctx, { body }) => updateMailSettings(ctx, body),
  }),
  route({
    method: 'POST', url: '/mail-settings/test-smtp', access: write, summary: 'Connect and log in to the SMTP server; with `to`, send a test message', tags,
    schema: { body: TestSmtpIn, response: { 200: TestAnswer } },
    example: { body: { to: 'me@example.com' } },
    transaction: false,
    handler: (ctx, { body }) => testSmtp(ctx, body ?? {}),
  }),
  route({
    method: 'POST', url: '/mail-settings/test-imap', access: write, summary: 'Connect and log in to the IMAP server and open the mailbox', tags,
    schema: { response: { 200: TestAnswer } },
    example: { body: {} },
    transaction: false,
    handler: (ctx) => testImap(ctx),
  }),
  route({
    method: 'POST', url: '/integrations/email/inbound/:token', operationId: 'integrations.email.inbound', access: { kind: 'public' },
    summary: 'Deliver one inbound email (raw RFC 822) to the tenant the token names', tags,
    description: 'The token decides the tenant (see `inbound_url` in the mail settings). Answers `202` with the ticket and message, or with `ignored` naming why nothing was created (auto-reply, own address, re-delivered Message-ID, sender over its hourly limit, calendar reply, unreadable message).',
    rawBody: { contentType: 'message/rfc822', maxBytes: INBOUND_MAX_BYTES, description: 'The message exactly as received, headers and body' },
    schema: { params: InboundParams, response: { 202: InboundAnswer } }, status: 202,
    transaction: false,
    handler: async (ctx, { params, request }: { params: { token: string }; request: FastifyRequest }) => {
      if (!Buffer.isBuffer(request.body) || request.body.length === 0) throw errors.invalid('body', 'must be a raw RFC 822 message');
      return receiveInboundForToken(ctx.deps, params.token, request.body, ctx.now, ctx.requestId);
    },
  }),
  route({
    method: 'GET', url: '/notification-templates', access: { kind: 'token', roles: ADMIN }, summary: 'The seven notification templates with translations', tags,
    schema: { response: { 200: NotificationTemplateList } },
    handler: (ctx) => listTemplates(ctx),
  }),
  route({
    method: 'PATCH', url: '/notification-templates/:identifier', access: { kind: 'token', roles: ADMIN }, summary: 'Edit a template (the default text, or a translation with `locale`)', tags,
    schema: { params: TemplateParams, body: TemplatePatch, response: { 200: NotificationTemplate } },
    example: { body: { subject: 'We got your message: {{ticket.subject}}', locale: 'en' } },
    handler: (ctx, { params, body }) => updateTemplate(ctx, params.identifier, body),
  }),
  route({
    method: 'DELETE', url: '/notification-templates/:identifier', access: { kind: 'token', roles: ADMIN }, summary: 'Restore the shipped texts of a template', tags,
    schema: { params: TemplateParams }, status: 204,
    handler: (ctx, { params }) => resetTemplate(ctx, params.identifier),
  }),
];
