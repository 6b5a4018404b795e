import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ANY_MEDIA_TYPE, route, STAFF } from '../route.js';
import { ListOf } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import { Message, MessageParams } from '../../src/conversation/schemas.js';
import type { ChannelName } from '../../src/channels/adapter.js';
import { createSource, disconnectSource, getSource, listSources, updateSource } from '../../src/channels/sources.js';
import { handshake, receiveWebhook } from '../../src/channels/inbound.js';
import { dispatchMessage } from '../../src/channels/outbound.js';
import { openMediaByToken } from '../../src/channels/media.js';
import { fileReply } from '../binary.js';
import { listTemplates, sendTemplate, submitTemplate } from '../../src/channels/templates.js';
import {
  ChannelSourceCreate, ChannelSourceListQuery, ChannelSourceOut, ChannelSourceUpdate, HandshakeQuery, TemplateCreate,
  TemplateListQuery, TemplateOut, TemplateSendIn, WebhookAck,
} from '../../src/channels/schemas.js';

/** Messaging and social channels (SPEC "Channels and web forms", CONTRACT §17). */
const tags = ['channels'];

const MediaTokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export const channelsRoutes = [
  route({
    method: 'GET', url: '/channel-sources', access: { kind: 'token', scope: 'channel_sources:read' }, summary: 'List connected channel sources (secrets masked)', tags,
    schema: { querystring: ChannelSourceListQuery, response: { 200: ListOf(ChannelSourceOut) } },
    handler: (ctx, { query }) => listSources(ctx, query),
  }),
  route({
    method: 'POST', url: '/channel-sources', access: { kind: 'token', scope: 'channel_sources:write', roles: ['admin'] }, summary: 'Connect a channel source (secrets stored encrypted, answered masked)', tags,
    schema: { body: ChannelSourceCreate, response: { 201: ChannelSourceOut } }, status: 201,
    example: { body: { channel: 'messaging_b', name: 'Support bot', config: { bot_token: '123456:ABC-example-token', secret_token: 'a-long-random-secret' } } },
    handler: (ctx, { body }) => createSource(ctx, body),
  }),
  route({
    method: 'GET', url: '/channel-sources/:id', access: { kind: 'token', scope: 'channel_sources:read' }, summary: 'A channel source (secrets masked)', tags,
    schema: { params: IdParams, response: { 200: ChannelSourceOut } },
    handler: (ctx, { params }) => getSource(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/channel-sources/:id', access: { kind: 'token', scope: 'channel_sources:write', roles: ['admin'] }, summary: 'Rename a source or change its config (a masked secret keeps the stored one)', tags,
    errors: ['conflict'],
    schema: { params: IdParams, body: ChannelSourceUpdate, response: { 200: ChannelSourceOut } },
    example: { body: { name: 'Renamed source' } },
    handler: (ctx, { params, body }) => updateSource(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/channel-sources/:id', access: { kind: 'token', scope: 'channel_sources:delete', roles: ['admin'] }, summary: 'Disconnect a source (its secrets are wiped; tickets stay)', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => disconnectSource(ctx, params.id),
  }),
  route({
    method: 'POST', url: '/tickets/:id/messages/:msgId/dispatch', access: { kind: 'token', scope: 'tickets:write', roles: STAFF },
    summary: 'Send a pending or failed channel reply to its channel again, now', tags: ['messages'],
    errors: ['conflict'],
    schema: { params: MessageParams, response: { 200: Message } },
    handler: (ctx, { params }) => dispatchMessage(ctx, params.id, params.msgId),
  }),
  route({
    method: 'GET', url: '/integrations/messaging_a/templates', access: { kind: 'token', scope: 'whatsapp_templates:read' },
    summary: 'Message templates of messaging_a, synced from the vendor', tags, transaction: true,
    schema: { querystring: TemplateListQuery, response: { 200: ListOf(TemplateOut) } },
    handler: (ctx, { query }) => listTemplates(ctx, query),
  }),
  route({
    method: 'POST', url: '/integrations/messaging_a/templates', access: { kind: 'token', scope: 'whatsapp_templates:write' },
    summary: 'Submit a message template to the vendor for review (status pending)', tags,
    errors: ['resource_not_found'],
    schema: { body: TemplateCreate, response: { 201: TemplateOut } }, status: 201,
    example: { body: { name: 'order_update', language: 'en', category: 'UTILITY', components: [{ type: 'BODY', text: 'Your order {{1}} has shipped.' }] } },
    handler: (ctx, { body }) => submitTemplate(ctx, body),
  }),
  route({
    method: 'POST', url: '/integrations/messaging_a/templates/send', access: { kind: 'token', scope: 'tickets:write', roles: STAFF },
    summary: 'Send an approved template on a messaging_a ticket (audited)', tags,
    errors: ['conflict', 'resource_not_found'],
    schema: { body: TemplateSendIn, response: { 201: Message } }, status: 201,
    example: { body: { ticket_id: '00000000-0000-7000-8000-000000000000', template_name: 'order_update', language: 'en', parameters: [{ type: 'text', text: 'A-1001' }] } },
    handler: (ctx, { body }) => sendTemplate(ctx, body),
  }),
  route({
    method: 'GET', url: '/media/:token', access: { kind: 'public' }, tags, operationId: 'channels.media',
    summary: 'An attachment of a channel reply, by its signed link (the token is the credential; valid 24 hours)',
    description: 'The link a vendor fetches the media of an outbound channel message from. A tampered, unknown or expired token is 404.',
    errors: ['resource_not_found', 'range_not_satisfiable'],
    transaction: false,
    binary: { description: 'The file, with its stored content type', ranges: true },
    schema: { params: MediaTokenParams },
    handler: async (ctx, { params, request }) => fileReply(request, await openMediaByToken(ctx.deps, params.token, ctx.now)),
  }),
];

export const WEBHOOK_MAX_BYTES = 1024 * 1024;
const TokenHashParams = Type.Object({ tokenHash: Type.String({ maxLength: 64 }) });

function webhookInput(request: FastifyRequest, params: Record<string, string> = {}) {
  return { headers: request.headers, rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0), params };
}

async function sendChallenge(reply: FastifyReply, challenge: string) {
  return reply.code(200).header('content-type', 'text/plain; charset=utf-8').send(challenge);
}

const signed = (channel: ChannelName, how: string) => route({
  method: 'POST', url: `/integrations/${channel}/webhook`, access: { kind: 'public' }, transaction: false,
  summary: `Inbound ${channel} webhook`, tags,
  description: `Public, verified by ${how}. A bad signature is \`401\` and creates nothing. Messages are stored as received and processed after the answer; a vendor message id seen before is ignored.`,
  rawBody: { contentType: ANY_MEDIA_TYPE, maxBytes: WEBHOOK_MAX_BYTES, description: 'The vendor\'s JSON payload, exactly as sent (the signature covers these bytes)' },
  errors: ['unauthenticated', 'validation_failed'],
  schema: { response: { 200: WebhookAck } },
  handler: (ctx, { request }) => receiveWebhook(ctx.deps, channel, webhookInput(request), ctx.now),
});

const handshakeRoute = (channel: ChannelName) => route({
  method: 'GET', url: `/integrations/${channel}/webhook`, access: { kind: 'public' }, transaction: false,
  summary: `Webhook verification handshake of ${channel}`, tags, page: true,
  errors: ['forbidden'],
  description: 'Answers `hub.challenge` as text when `hub.mode` is `subscribe` and `hub.verify_token` is a connected source\'s verify token; else `403`.',
  schema: { querystring: HandshakeQuery },
  handler: async (ctx, { query, reply }) => sendChallenge(reply, await handshake(ctx.deps, channel, query)),
});

const HUB = 'X-Hub-Signature-256 (HMAC-SHA256 of the raw body with the app secret)';

/** The inbound webhooks: registered apart, as they read the raw body whatever its media type. */
export const channelWebhookRoutes = [
  signed('messaging_a', HUB),
  handshakeRoute('messaging_a'),
  signed('social_a', HUB),
  handshakeRoute('social_a'),
  signed('social_b', HUB),
  handshakeRoute('social_b'),
  signed('messaging_c', 'X-Line-Signature (base64 HMAC-SHA256 of the raw body with the channel secret)'),
  route({
    method: 'POST', url: '/integrations/messaging_b/webhook/:tokenHash', access: { kind: 'public' }, transaction: false,
    summary: 'Inbound messaging_b webhook', tags,
    description: 'Public: `tokenHash` is the SHA-256 hex of the source\'s bot token, and the request must carry `X-Telegram-Bot-Api-Secret-Token` equal to its secret token; else `401` and nothing is created.',
    rawBody: { contentType: ANY_MEDIA_TYPE, maxBytes: WEBHOOK_MAX_BYTES, description: 'The vendor\'s JSON update, exactly as sent' },
    errors: ['unauthenticated', 'validation_failed'],
    schema: { params: TokenHashParams, response: { 200: WebhookAck } },
    handler: (ctx, { params, request }) => receiveWebhook(ctx.deps, 'messaging_b', webhookInput(request, { tokenHash: params.tokenHash }), ctx.now),
  }),
];
